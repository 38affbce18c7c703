// Package channeltest runs a chat adapter under test, the way the
// Telegram, Slack and Discord tests drive their adapters against their
// fakes: Start in the background with its events collected, its log kept
// for failure messages, and its return checked when the test stops it.
package channeltest

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
)

// Log is a log sink safe for concurrent writers.
type Log struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// String returns everything written so far.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Logger returns a text logger at info level that writes to l.
func (l *Log) Logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// CountLines returns how many lines of s contain substr.
func CountLines(s, substr string) int {
	n := 0
	for line := range strings.Lines(s) {
		if strings.Contains(line, substr) {
			n++
		}
	}
	return n
}

// Channel is what a Runner drives: an adapter's Start and Ready.
type Channel interface {
	Start(ctx context.Context, h channels.Handler) error
	Ready(ctx context.Context) error
}

// Runner runs one Channel for one test.
type Runner struct {
	// Log is the adapter's log, quoted when a wait fails.
	Log *Log
	// Inbound receives the events Start delivers when no handler is given
	// (up to 100 unread).
	Inbound chan channels.Inbound

	t      testing.TB
	ch     Channel
	cancel context.CancelFunc
	done   chan error
}

// NewRunner returns a Runner for ch, whose logger writes to log.
func NewRunner(t testing.TB, ch Channel, log *Log) *Runner {
	return &Runner{Log: log, Inbound: make(chan channels.Inbound, 100), t: t, ch: ch}
}

// Start runs the channel's Start in the background, delivering to handler,
// or to Inbound when handler is nil, and stops it at the test's cleanup.
func (r *Runner) Start(handler channels.Handler) {
	r.t.Helper()
	if handler == nil {
		handler = func(_ context.Context, in channels.Inbound) error { r.Inbound <- in; return nil }
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.done = make(chan error, 1)
	go func() { r.done <- r.ch.Start(ctx, handler) }()
	r.t.Cleanup(r.Stop)
}

// Stop cancels Start and fails the test unless it returns nil within 15 s.
// It does nothing when the channel is not running.
func (r *Runner) Stop() {
	r.t.Helper()
	if r.cancel == nil {
		return
	}
	r.cancel()
	select {
	case err := <-r.done:
		if err != nil {
			r.t.Errorf("Start returned %v after cancel, want nil", err)
		}
	case <-time.After(15 * time.Second):
		r.t.Fatal("Start did not return after cancel")
	}
	r.cancel = nil
}

// Ctx returns a context bounded well above any expected wait (20 s).
func (r *Runner) Ctx() context.Context {
	ctx, cancel := context.WithTimeout(r.t.Context(), 20*time.Second)
	r.t.Cleanup(cancel)
	return ctx
}

// WaitReady waits until Ready reports nil.
func (r *Runner) WaitReady() {
	r.t.Helper()
	r.WaitState(true)
}

// WaitState waits until Ready reports ready (nil) or not ready (an error).
func (r *Runner) WaitState(ready bool) {
	r.t.Helper()
	ctx := r.Ctx()
	for (r.ch.Ready(ctx) == nil) != ready {
		select {
		case <-ctx.Done():
			r.t.Fatalf("Ready = %v, want ready=%v; logs:\n%s", r.ch.Ready(context.Background()), ready, r.Log)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// WaitUntil polls cond until it holds, failing t after 10 s: for tests that
// wait on state with no channel under a Runner (the pipeline's, a feature's).
func WaitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after 10s waiting until %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WaitUntil waits until cond holds, failing the test with the channel's
// logs when Ctx ends first.
func (r *Runner) WaitUntil(what string, cond func() bool) {
	r.t.Helper()
	ctx := r.Ctx()
	for !cond() {
		select {
		case <-ctx.Done():
			r.t.Fatalf("timed out waiting until %s; logs:\n%s", what, r.Log)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// Next returns the next event delivered to Inbound, failing the test after
// 15 s without one.
func (r *Runner) Next() channels.Inbound {
	r.t.Helper()
	select {
	case in := <-r.Inbound:
		return in
	case <-time.After(15 * time.Second):
		r.t.Fatalf("no inbound event; logs:\n%s", r.Log)
		return channels.Inbound{}
	}
}

// LongReport is a Markdown reply of at least 10 000 characters, for tests
// of how a send splits and escapes: "# Build report", intro, a fenced Go
// block of n lines made with lineFmt (given the line's number), then
// paragraphs with emphasis and a link. It returns the text and the code
// lines.
func LongReport(intro string, n int, lineFmt string) (string, []string) {
	var md strings.Builder
	md.WriteString("# Build report\n\n" + intro + "\n\n```go\n")
	code := make([]string, 0, n)
	for i := range n {
		line := fmt.Sprintf(lineFmt, i)
		code = append(code, line)
		md.WriteString(line + "\n")
	}
	md.WriteString("```\n\n")
	for md.Len() < 10000 {
		md.WriteString("Some *closing* words with a [link](https://example.com/?a=1&b=2).\n\n")
	}
	return md.String(), code
}
