package slacktest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// pingEvery is how often the fake pings Socket Mode clients. Slack does
// not document its interval: slack-go, like Slack's own SDKs, counts a
// connection dead after 30 s without a ping, and users behind middleboxes
// that drop connections idle for 10 s report that Slack's next ping comes
// later than that. So the fake pings at the short end of that range: an
// idle daemon measured against it (deploy/fakes) pays for about as many
// pings as against Slack, not the twenty times as many a 500 ms interval
// would.
const pingEvery = 10 * time.Second

// socketState is the Socket Mode side of the fake; its fields other than
// wg are guarded by Server.mu.
type socketState struct {
	conns  []*wsConn // live connections, oldest first
	hellos int       // connections greeted so far
	acks   map[string]int
	sent   []string // envelope ids, in order
	seq    int
	closed bool
	wg     sync.WaitGroup // connection handlers, pingers and the redeliverer

	// spread mode (Spread): random connection, redelivery when unacked
	spread          bool
	ackTimeout      time.Duration
	pending         map[string]*pendingEnvelope
	resent, dropped int
}

func (st *socketState) init() { st.acks = map[string]int{} }

// wsConn is one Socket Mode connection; writes are serialized.
type wsConn struct {
	c    *websocket.Conn
	wmu  sync.Mutex
	done chan struct{}
}

func (c *wsConn) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return c.c.WriteMessage(websocket.TextMessage, b)
}

// connectionsOpen serves apps.connections.open: it checks the app token
// and hands out the fake's Socket Mode URL.
func (s *Server) connectionsOpen(w http.ResponseWriter, r *http.Request) {
	bearer := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.webMethod("apps.connections.open", func(url.Values) (any, error) {
		if bearer != s.appToken {
			return nil, slackError("invalid_auth")
		}
		return map[string]any{"ok": true, "url": "ws://" + s.api.ServerAddr + "/socket-mode"}, nil
	})(w, withToken(r, s.botToken))
}

// withToken lets an app-token call pass the bot-token check of webMethod;
// connectionsOpen checks the app token itself.
func withToken(r *http.Request, token string) *http.Request {
	if err := r.ParseForm(); err == nil {
		r.Form.Set("token", token)
	}
	return r
}

// serveSocket upgrades to a WebSocket, says hello, pings, and records the
// acknowledgements the client sends back.
func (s *Server) serveSocket(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.socket.closed {
		s.mu.Unlock()
		http.Error(w, "closed", http.StatusServiceUnavailable)
		return
	}
	s.socket.wg.Add(1)
	s.mu.Unlock()
	defer s.socket.wg.Done()

	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	c, err := up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	conn := &wsConn{c: c, done: make(chan struct{})}
	defer func() {
		close(conn.done)
		_ = c.Close()
		s.mu.Lock()
		for i, x := range s.socket.conns {
			if x == conn {
				s.socket.conns = append(s.socket.conns[:i], s.socket.conns[i+1:]...)
				break
			}
		}
		s.notify()
		s.mu.Unlock()
	}()

	s.mu.Lock()
	if s.socket.closed {
		s.mu.Unlock()
		return
	}
	s.socket.conns = append(s.socket.conns, conn)
	s.socket.wg.Add(1)
	s.mu.Unlock()
	go s.ping(conn)

	hello := map[string]any{"type": "hello", "num_connections": 1,
		"connection_info": map[string]any{"app_id": AppID},
		"debug_info":      map[string]any{"host": "slacktest", "approximate_connection_time": 3600}}
	if err := conn.write(hello); err != nil {
		return
	}
	s.mu.Lock()
	s.socket.hellos++
	s.notify()
	s.mu.Unlock()

	for {
		_, data, err := c.ReadMessage()
		if err != nil {
			return
		}
		var ack struct {
			EnvelopeID string `json:"envelope_id"`
		}
		if json.Unmarshal(data, &ack) != nil || ack.EnvelopeID == "" {
			continue
		}
		s.mu.Lock()
		s.socket.acks[ack.EnvelopeID]++
		delete(s.socket.pending, ack.EnvelopeID)
		s.notify()
		s.mu.Unlock()
	}
}

// ping sends WebSocket pings until the connection ends.
func (s *Server) ping(conn *wsConn) {
	defer s.socket.wg.Done()
	t := time.NewTicker(pingEvery)
	defer t.Stop()
	for {
		select {
		case <-conn.done:
			return
		case <-t.C:
			_ = conn.c.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(time.Second))
		}
	}
}

// closeSockets drops every connection and refuses new ones.
func (s *Server) closeSockets() {
	for _, c := range s.liveConns(true) {
		_ = c.c.UnderlyingConn().Close()
	}
}

// liveConns returns the live connections, marking the socket side closed
// when closing is set.
func (s *Server) liveConns(closing bool) []*wsConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if closing {
		s.socket.closed = true
	}
	return append([]*wsConn(nil), s.socket.conns...)
}

// Connections returns how many Socket Mode connections were greeted so
// far, including closed ones.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.socket.hellos
}

// WaitConnections waits until n connections were greeted in total.
func (s *Server) WaitConnections(ctx context.Context, n int) error {
	return s.waitFor(ctx, func() bool { return s.socket.hellos >= n && len(s.socket.conns) > 0 },
		func() string { return fmt.Sprintf("%d Socket Mode connections, want %d", s.socket.hellos, n) })
}

// DropConnections cuts every live Socket Mode connection without a close
// handshake, as a network failure would.
func (s *Server) DropConnections() {
	for _, c := range s.liveConns(false) {
		_ = c.c.UnderlyingConn().Close()
	}
}

// RequestDisconnect asks every live client to reconnect, as Slack does
// before it rotates its servers.
func (s *Server) RequestDisconnect() error {
	var errs []error
	for _, c := range s.liveConns(false) {
		errs = append(errs, c.write(map[string]any{"type": "disconnect", "reason": "refresh_requested",
			"debug_info": map[string]any{"host": "slacktest"}}))
	}
	return errors.Join(errs...)
}

// SendEvent sends an events_api envelope carrying event (a message or
// app_mention event) as event eventID, on the newest connection. It
// returns the envelope id.
func (s *Server) SendEvent(eventID string, event any) (string, error) {
	return s.SendEnvelope("events_api", callback(eventID, event))
}

// SendInteraction sends an interactive envelope carrying payload (see
// BlockActions), on the newest connection. It returns the envelope id.
func (s *Server) SendInteraction(payload any) (string, error) {
	return s.SendEnvelope("interactive", payload)
}

// SendEnvelope sends an envelope of type typ with payload on the newest
// connection (a random one after Spread) and returns its id. After Spread,
// an envelope the picked connection could not take is not an error: it is
// sent again, as every unacknowledged one is.
func (s *Server) SendEnvelope(typ string, payload any) (string, error) {
	s.mu.Lock()
	conn := s.pickLocked()
	if conn == nil {
		s.mu.Unlock()
		return "", errors.New("slacktest: no Socket Mode connection")
	}
	s.socket.seq++
	id := fmt.Sprintf("env-%04d", s.socket.seq)
	s.socket.sent = append(s.socket.sent, id)
	spread := s.socket.spread
	if spread {
		s.socket.pending[id] = &pendingEnvelope{typ: typ, payload: payload, sentAt: time.Now()}
	}
	s.mu.Unlock()
	env := map[string]any{"envelope_id": id, "type": typ, "payload": payload,
		"accepts_response_payload": typ == "interactive", "retry_attempt": 0, "retry_reason": ""}
	if err := conn.write(env); err != nil {
		if spread {
			// The connection died (a replica killed) after it was picked.
			// As with Slack, the envelope is pending: redeliver sends it
			// again on a live connection once it is overdue.
			return id, nil
		}
		return "", fmt.Errorf("slacktest: send envelope: %w", err)
	}
	return id, nil
}

// Acks returns how often envelopeID was acknowledged.
func (s *Server) Acks(envelopeID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.socket.acks[envelopeID]
}

// Unacked returns the envelopes sent but not acknowledged, in order.
func (s *Server) Unacked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, id := range s.socket.sent {
		if s.socket.acks[id] == 0 {
			out = append(out, id)
		}
	}
	return out
}

// WaitAck waits until envelopeID is acknowledged.
func (s *Server) WaitAck(ctx context.Context, envelopeID string) error {
	return s.waitFor(ctx, func() bool { return s.socket.acks[envelopeID] > 0 },
		func() string { return "envelope " + envelopeID + " not acknowledged" })
}
