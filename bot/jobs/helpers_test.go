package jobs_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
)

// oneAgent finds the default agent alone, as a Router given no other
// agents does.
type oneAgent struct{ run bot.Runner }

func (a oneAgent) Agent(name string) (string, bot.Runner, bool) {
	if name == "" || name == "default" {
		return "default", a.run, a.run != nil
	}
	return name, nil, false
}

// recorder is a channel that records what is sent to it.
type recorder struct {
	mu   sync.Mutex
	sent []channels.Outbound
	cond *sync.Cond
}

func newRecorder() *recorder {
	r := &recorder{}
	r.cond = sync.NewCond(&r.mu)
	return r
}

func (r *recorder) Platform() string { return "test" }

func (r *recorder) Start(ctx context.Context, _ channels.Handler) error {
	<-ctx.Done()
	return nil
}

func (r *recorder) Send(_ context.Context, m channels.Outbound) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, m)
	r.cond.Broadcast()
	return fmt.Sprint(len(r.sent)), nil
}

// waitFor waits until n messages were sent to chat and returns them.
func (r *recorder) waitFor(t *testing.T, chat string, n int) []channels.Outbound {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	go func() { time.Sleep(time.Until(deadline)); r.cond.Broadcast() }()
	r.mu.Lock()
	defer r.mu.Unlock()
	for {
		var got []channels.Outbound
		for _, m := range r.sent {
			if m.To.ChatID == chat {
				got = append(got, m)
			}
		}
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("chat %s: %d messages, want %d: %+v", chat, len(got), n, got)
		}
		r.cond.Wait()
	}
}

func (r *recorder) count(chat string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, m := range r.sent {
		if m.To.ChatID == chat {
			n++
		}
	}
	return n
}

// waitUntil polls cond until it holds, failing the test after 10 s.
var waitUntil = channeltest.WaitUntil
