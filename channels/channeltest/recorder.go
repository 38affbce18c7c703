package channeltest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
)

// Recorder is a channel of platform "test" that records what is sent to
// it; the i-th message sent (0-based, over all chats) gets id i+1.
type Recorder struct {
	mu   sync.Mutex
	sent []channels.Outbound
	cond *sync.Cond
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	r := &Recorder{}
	r.cond = sync.NewCond(&r.mu)
	return r
}

// Platform implements channels.Channel.
func (r *Recorder) Platform() string { return "test" }

// Start implements channels.Channel: it receives nothing and returns when
// ctx ends.
func (r *Recorder) Start(ctx context.Context, _ channels.Handler) error {
	<-ctx.Done()
	return nil
}

// Send implements channels.Channel: it records m.
func (r *Recorder) Send(_ context.Context, m channels.Outbound) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, m)
	r.cond.Broadcast()
	return fmt.Sprint(len(r.sent)), nil
}

// Sent returns every message sent so far, in order.
func (r *Recorder) Sent() []channels.Outbound {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]channels.Outbound(nil), r.sent...)
}

// SentTo returns what was sent to chat so far.
func (r *Recorder) SentTo(chat string) []channels.Outbound {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sentToLocked(chat)
}

func (r *Recorder) sentToLocked(chat string) []channels.Outbound {
	var out []channels.Outbound
	for _, m := range r.sent {
		if m.To.ChatID == chat {
			out = append(out, m)
		}
	}
	return out
}

// Count returns how many messages were sent to chat.
func (r *Recorder) Count(chat string) int { return len(r.SentTo(chat)) }

// IDOf returns the platform message id given to the i-th message
// (0-based) sent to chat, or "".
func (r *Recorder) IDOf(chat string, i int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for k, m := range r.sent {
		if m.To.ChatID == chat {
			if n == i {
				return fmt.Sprint(k + 1)
			}
			n++
		}
	}
	return ""
}

// WaitFor waits until n messages were sent to chat and returns them,
// failing the test after 20 s.
func (r *Recorder) WaitFor(t testing.TB, chat string, n int) []channels.Outbound {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	go func() { time.Sleep(time.Until(deadline)); r.cond.Broadcast() }()
	r.mu.Lock()
	defer r.mu.Unlock()
	for {
		got := r.sentToLocked(chat)
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("chat %s: %d messages, want %d: %+v", chat, len(got), n, got)
		}
		r.cond.Wait()
	}
}
