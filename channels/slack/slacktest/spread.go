package slacktest

import (
	"math/rand/v2"
	"time"
)

// maxRedeliveries is how often Slack sends an unacknowledged envelope
// again (retry_attempt 1 to 3) before it gives up.
const maxRedeliveries = 3

// pendingEnvelope is an envelope sent in spread mode and not yet
// acknowledged.
type pendingEnvelope struct {
	typ      string
	payload  any
	sentAt   time.Time
	attempts int // redeliveries so far
}

// Spread makes the fake deliver as Slack does to an app with several
// Socket Mode connections (one per replica): every envelope goes to a
// random live connection, and one not acknowledged within ackTimeout is
// sent again to a random live connection, with retry_attempt counting up
// to 3, after which it is dropped.
func (s *Server) Spread(ackTimeout time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.socket.spread || s.socket.closed {
		return
	}
	s.socket.spread = true
	s.socket.ackTimeout = ackTimeout
	s.socket.pending = map[string]*pendingEnvelope{}
	s.socket.wg.Add(1)
	go s.redeliver()
}

// Redelivered returns how many envelopes were sent again for want of an
// acknowledgement, and how many were given up.
func (s *Server) Redelivered() (resent, dropped int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.socket.resent, s.socket.dropped
}

// pickLocked returns the connection an envelope goes to: the newest, or a
// random one in spread mode; nil when none is live.
func (s *Server) pickLocked() *wsConn {
	n := len(s.socket.conns)
	switch {
	case n == 0:
		return nil
	case s.socket.spread:
		return s.socket.conns[rand.IntN(n)]
	}
	return s.socket.conns[n-1]
}

// redeliver sends overdue envelopes again until the server closes.
func (s *Server) redeliver() {
	defer s.socket.wg.Done()
	tick := time.NewTicker(max(s.socket.ackTimeout/4, 10*time.Millisecond))
	defer tick.Stop()
	for range tick.C {
		type due struct {
			id   string
			env  map[string]any
			conn *wsConn
		}
		var send []due
		s.mu.Lock()
		if s.socket.closed {
			s.mu.Unlock()
			return
		}
		now := time.Now()
		for id, p := range s.socket.pending {
			if now.Sub(p.sentAt) < s.socket.ackTimeout {
				continue
			}
			if p.attempts >= maxRedeliveries {
				delete(s.socket.pending, id)
				s.socket.dropped++
				continue
			}
			conn := s.pickLocked()
			if conn == nil {
				continue
			}
			p.attempts++
			p.sentAt = now
			s.socket.resent++
			send = append(send, due{id: id, conn: conn, env: map[string]any{"envelope_id": id, "type": p.typ, "payload": p.payload,
				"accepts_response_payload": p.typ == "interactive", "retry_attempt": p.attempts, "retry_reason": "timeout"}})
		}
		s.mu.Unlock()
		for _, d := range send {
			_ = d.conn.write(d.env) // a dead connection: the next tick tries another
		}
	}
}
