package discordtest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Identify is an Identify (op 2) the gateway received.
type Identify struct {
	Token   string // as sent, "Bot …" included
	Intents int
}

// maxBacklog bounds the events a session keeps for Resume.
const maxBacklog = 1000

// session is a gateway session: its events, numbered, for Resume.
type session struct {
	id     string
	seq    int64
	events []gwPayload // the last maxBacklog dispatches
	conn   *gwConn     // nil while disconnected
}

// gwPayload is a gateway message.
type gwPayload struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d"`
	S  *int64          `json:"s"`
	T  *string         `json:"t"`
}

// gwConn is one gateway websocket connection. A writer goroutine sends its
// queued payloads in order, so the server never writes to a socket while
// holding its lock.
type gwConn struct {
	ws   *websocket.Conn
	out  chan outgoing
	done chan struct{} // closed by drop
	once sync.Once
}

// outgoing is a payload to send, or a close frame when code is set.
type outgoing struct {
	p    gwPayload
	code int
	text string
}

// outBuffer is how many payloads may wait for a slow client before the
// connection is dropped.
const outBuffer = 4096

func newConn(ws *websocket.Conn) *gwConn {
	return &gwConn{ws: ws, out: make(chan outgoing, outBuffer), done: make(chan struct{})}
}

// send queues one payload; it reports false when the connection is gone or
// too far behind (and then drops it).
func (c *gwConn) send(p gwPayload) bool {
	select {
	case <-c.done:
		return false
	default:
	}
	select {
	case c.out <- outgoing{p: p}:
		return true
	default:
		c.drop()
		return false
	}
}

// closeWith queues a close frame with code; the connection closes after
// it is written.
func (c *gwConn) closeWith(code int, text string) {
	select {
	case c.out <- outgoing{code: code, text: text}:
	default:
		c.drop()
	}
}

// write sends queued payloads until the connection is dropped.
func (c *gwConn) write() {
	for {
		select {
		case <-c.done:
			return
		case o := <-c.out:
			_ = c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
			if o.code != 0 {
				_ = c.ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(o.code, o.text))
				c.drop()
				return
			}
			if c.ws.WriteJSON(o.p) != nil {
				c.drop()
				return
			}
		}
	}
}

// drop closes the connection without a close frame, like a network
// failure.
func (c *gwConn) drop() {
	c.once.Do(func() {
		close(c.done)
		_ = c.ws.Close()
	})
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// serveGateway runs one gateway connection.
func (s *Server) serveGateway(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closed || s.gatewayDown {
		s.mu.Unlock()
		http.Error(w, "gateway unavailable", http.StatusServiceUnavailable)
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := newConn(ws)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.drop()
		return
	}
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		c.write()
	}()
	s.conns[c] = struct{}{}
	s.notifyLocked()
	interval := s.heartbeat
	s.mu.Unlock()
	defer func() {
		c.drop()
		<-wrote
		s.mu.Lock()
		delete(s.conns, c)
		for _, ss := range s.sessions {
			if ss.conn == c {
				ss.conn = nil
			}
		}
		s.notifyLocked()
		s.mu.Unlock()
	}()
	if !c.send(payload(10, map[string]any{"heartbeat_interval": interval.Milliseconds()})) {
		return
	}
	for {
		var p gwPayload
		if err := ws.ReadJSON(&p); err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) && (ce.Code == websocket.CloseNormalClosure || ce.Code == websocket.CloseGoingAway) {
				s.endSession(c) // a clean close ends the session, as on Discord
			}
			return
		}
		switch p.Op {
		case 1: // heartbeat
			if !c.send(gwPayload{Op: 11}) {
				return
			}
		case 2:
			s.identify(c, p.D) // failures close c, ending ReadJSON
		case 6:
			s.resume(c, p.D)
		}
	}
}

// payload builds a non-dispatch payload.
func payload(op int, d any) gwPayload {
	raw, _ := json.Marshal(d)
	return gwPayload{Op: op, D: raw}
}

// identify handles op 2: it starts a session and sends READY, or closes c
// with 4004 (bad token) or 4014 (rejected intents).
func (s *Server) identify(c *gwConn, raw json.RawMessage) {
	var d struct {
		Token   string `json:"token"`
		Intents int    `json:"intents"`
	}
	if json.Unmarshal(raw, &d) != nil {
		c.closeWith(4002, "Error while decoding payload.")
		return
	}
	s.mu.Lock()
	s.identifies = append(s.identifies, Identify{Token: d.Token, Intents: d.Intents})
	s.notifyLocked()
	token, ok := strings.CutPrefix(d.Token, "Bot ")
	authed := ok && token != "" && (s.token == "" || token == s.token)
	rejected := d.Intents&s.rejected != 0
	if !authed || rejected {
		s.mu.Unlock()
		if !authed {
			c.closeWith(4004, "Authentication failed.")
		} else {
			c.closeWith(4014, "Disallowed intent(s).")
		}
		return
	}
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	ss := &session{id: hex.EncodeToString(id), conn: c}
	s.sessions[ss.id] = ss
	ready := map[string]any{
		"v": 10, "user": botUser(), "session_id": ss.id, "resume_gateway_url": s.gatewayURL(),
		"guilds": []any{}, "private_channels": []any{}, "shard": []int{0, 1},
		"application": map[string]any{"id": BotID, "flags": 0},
	}
	c.send(s.nextLocked(ss, "READY", ready))
	s.notifyLocked()
	s.mu.Unlock()
}

// resume handles op 6: it replays the events the session missed and sends
// RESUMED, or answers Invalid Session (op 9) for an unknown session.
func (s *Server) resume(c *gwConn, raw json.RawMessage) {
	var d struct {
		Token     string `json:"token"`
		SessionID string `json:"session_id"`
		Seq       int64  `json:"seq"`
	}
	if json.Unmarshal(raw, &d) != nil {
		c.closeWith(4002, "Error while decoding payload.")
		return
	}
	s.mu.Lock()
	token, _ := strings.CutPrefix(d.Token, "Bot ")
	ss, ok := s.sessions[d.SessionID]
	if !ok || (s.token != "" && token != s.token) {
		s.mu.Unlock()
		c.send(payload(9, false))
		return
	}
	s.resumes++
	ss.conn = c
	// Replay under the lock, so no new dispatch overtakes the backlog.
	for _, p := range ss.events {
		if p.S != nil && *p.S > d.Seq {
			c.send(p)
		}
	}
	c.send(s.nextLocked(ss, "RESUMED", map[string]any{}))
	s.notifyLocked()
	s.mu.Unlock()
}

// endSession forgets the session on c, which can no longer be resumed.
func (s *Server) endSession(c *gwConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, ss := range s.sessions {
		if ss.conn == c {
			delete(s.sessions, id)
		}
	}
}

// nextLocked numbers a dispatch for ss and keeps it for Resume. s.mu must
// be held.
func (s *Server) nextLocked(ss *session, t string, d any) gwPayload {
	raw, _ := json.Marshal(d)
	ss.seq++
	seq, typ := ss.seq, t
	p := gwPayload{Op: 0, D: raw, S: &seq, T: &typ}
	ss.events = append(ss.events, p)
	if len(ss.events) > maxBacklog {
		ss.events = ss.events[len(ss.events)-maxBacklog:]
	}
	return p
}

// dispatchLocked sends an event to every session; sessions without a
// connection keep it for Resume. s.mu must be held: payloads are numbered
// and queued under it, so each connection sees them in order.
func (s *Server) dispatchLocked(t string, d any) {
	for _, ss := range s.sessions {
		p := s.nextLocked(ss, t, d)
		if ss.conn != nil {
			ss.conn.send(p)
		}
	}
	s.notifyLocked()
}

// DropConnection cuts every gateway connection without a close frame, as
// a network failure would. Sessions stay resumable.
func (s *Server) DropConnection() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.drop()
	}
}

// SetGatewayDown makes the gateway refuse new connections (HTTP 503) while
// down is true; existing connections are not touched.
func (s *Server) SetGatewayDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gatewayDown = down
}

// RejectIntents makes Identify fail with close code 4014 (Disallowed
// intents) when it asks for any of intents, as Discord does for privileged
// intents not enabled in the Developer Portal.
func (s *Server) RejectIntents(intents int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rejected = intents
}

// Identifies returns the Identify payloads received, oldest first.
func (s *Server) Identifies() []Identify {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Identify(nil), s.identifies...)
}

// Resumes returns how many sessions were resumed.
func (s *Server) Resumes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resumes
}

// Connections returns the number of open gateway connections.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}
