package telegram_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/telegram"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const token = "777:test-token-secret"

// logBuffer collects log output, safe for concurrent writers.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// harness is a Channel running against a fake Bot API.
type harness struct {
	t       *testing.T
	fake    *telegramtest.Server
	ch      *telegram.Channel
	logs    *logBuffer
	inbound chan channels.Inbound
	cancel  context.CancelFunc
	done    chan error
}

// newHarness builds a Channel against a new fake. tweak may adjust the
// options before New.
func newHarness(t *testing.T, tweak func(*telegram.Options)) *harness {
	t.Helper()
	fake := telegramtest.NewServer(token)
	t.Cleanup(fake.Close)
	return newHarnessOn(t, fake, tweak)
}

// newHarnessOn builds a Channel against an existing fake.
func newHarnessOn(t *testing.T, fake *telegramtest.Server, tweak func(*telegram.Options)) *harness {
	t.Helper()
	logs := &logBuffer{}
	opts := telegram.Options{
		Token:       token,
		APIURL:      fake.URL(),
		Logger:      slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})),
		PollTimeout: 2 * time.Second,
		RetryMin:    10 * time.Millisecond,
		RetryMax:    50 * time.Millisecond,
	}
	if tweak != nil {
		tweak(&opts)
	}
	ch, err := telegram.New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return &harness{t: t, fake: fake, ch: ch, logs: logs, inbound: make(chan channels.Inbound, 100)}
}

// start runs Start in the background, delivering to h.inbound (or to
// handler when set), and stops it at cleanup.
func (h *harness) start(handler channels.Handler) {
	h.t.Helper()
	if handler == nil {
		handler = func(_ context.Context, in channels.Inbound) error { h.inbound <- in; return nil }
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	h.done = make(chan error, 1)
	go func() { h.done <- h.ch.Start(ctx, handler) }()
	h.t.Cleanup(h.stop)
}

// stop cancels Start and waits for it to return nil.
func (h *harness) stop() {
	h.t.Helper()
	if h.cancel == nil {
		return
	}
	h.cancel()
	select {
	case err := <-h.done:
		if err != nil {
			h.t.Errorf("Start returned %v after cancel, want nil", err)
		}
	case <-time.After(10 * time.Second):
		h.t.Fatal("Start did not return after cancel")
	}
	h.cancel = nil
}

// ctx is a context bounded well above any expected wait.
func (h *harness) ctx() context.Context {
	ctx, cancel := context.WithTimeout(h.t.Context(), 20*time.Second)
	h.t.Cleanup(cancel)
	return ctx
}

// waitReady waits until the channel polls.
func (h *harness) waitReady() {
	h.t.Helper()
	ctx := h.ctx()
	if err := h.fake.WaitRequests(ctx, "getUpdates", 1); err != nil {
		h.t.Fatalf("channel never polled: %v; logs:\n%s", err, h.logs)
	}
	for h.ch.Ready(ctx) != nil {
		select {
		case <-ctx.Done():
			h.t.Fatalf("not ready: %v", h.ch.Ready(ctx))
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// next returns the next inbound event.
func (h *harness) next() channels.Inbound {
	h.t.Helper()
	select {
	case in := <-h.inbound:
		return in
	case <-time.After(15 * time.Second):
		h.t.Fatalf("no inbound event; logs:\n%s", h.logs)
		return channels.Inbound{}
	}
}

func countLines(s, substr string) int {
	n := 0
	for line := range strings.Lines(s) {
		if strings.Contains(line, substr) {
			n++
		}
	}
	return n
}
