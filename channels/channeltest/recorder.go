package channeltest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
)

// Recorder is a channel of platform "test" that records what is sent to
// it; the i-th message sent (0-based, over all chats) gets id i+1.
type Recorder struct {
	// FileLimit, when above 0, is the largest file it takes; a larger one
	// is refused with a *channels.FileTooLargeError before any of it is
	// read, as a platform's adapter does.
	FileLimit int64

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

// Send implements channels.Channel: it records m. A file is read to its
// end, as an upload would, and recorded with the bytes received: the
// recorded File's Open serves them.
func (r *Recorder) Send(ctx context.Context, m channels.Outbound) (string, error) {
	if m.File != nil {
		f, err := r.receiveFile(ctx, *m.File)
		if err != nil {
			return "", err
		}
		m.File = f
	}
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

// receiveFile reads f as an upload would and returns a copy of it that
// serves the bytes read.
func (r *Recorder) receiveFile(ctx context.Context, f channels.File) (*channels.File, error) {
	if r.FileLimit > 0 && f.Size > r.FileLimit {
		return nil, &channels.FileTooLargeError{Platform: r.Platform(), Name: f.Name, Size: f.Size, Limit: r.FileLimit}
	}
	body, err := f.Open(ctx)
	if err != nil {
		return nil, fmt.Errorf("test: open %s: %w", f.Name, err)
	}
	defer body.Close()
	data, err := io.ReadAll(body)
	if err != nil {
		return nil, fmt.Errorf("test: read %s: %w", f.Name, err)
	}
	f.Open = func(context.Context) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	return &f, nil
}

// ReadFile returns the bytes a recorded message's file carried (nil for a
// message without a file).
func ReadFile(t testing.TB, m channels.Outbound) []byte {
	t.Helper()
	if m.File == nil {
		return nil
	}
	body, err := m.File.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer body.Close()
	data, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
