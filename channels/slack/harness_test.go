package slack_test

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
	"github.com/switchboard-chat/switchboard/channels/slack"
	"github.com/switchboard-chat/switchboard/channels/slack/slacktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	botToken = "xoxb-test-bot-token-secret"
	appToken = "xapp-test-app-token-secret"
	secret   = "signing-secret-for-tests"
)

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

// harness is a Channel running against a fake Slack.
type harness struct {
	t       *testing.T
	fake    *slacktest.Server
	ch      *slack.Channel
	logs    *logBuffer
	inbound chan channels.Inbound
	cancel  context.CancelFunc
	done    chan error
}

// newHarness builds a Channel in Socket Mode against a new fake. tweak may
// adjust the options before New.
func newHarness(t *testing.T, tweak func(*slack.Options)) *harness {
	t.Helper()
	fake := slacktest.NewServer(botToken, appToken)
	t.Cleanup(fake.Close)
	return newHarnessOn(t, fake, tweak)
}

// newHarnessOn builds a Channel against an existing fake.
func newHarnessOn(t *testing.T, fake *slacktest.Server, tweak func(*slack.Options)) *harness {
	t.Helper()
	fake.SetUser("U0ANN", "Ann")
	logs := &logBuffer{}
	opts := slack.Options{
		BotToken: botToken,
		AppToken: appToken,
		APIURL:   fake.URL(),
		Logger:   slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})),
		RetryMin: 10 * time.Millisecond,
		RetryMax: 50 * time.Millisecond,
	}
	if tweak != nil {
		tweak(&opts)
	}
	ch, err := slack.New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return &harness{t: t, fake: fake, ch: ch, logs: logs, inbound: make(chan channels.Inbound, 100)}
}

// start runs Start in the background, delivering to h.inbound, and stops
// it at cleanup.
func (h *harness) start() {
	h.t.Helper()
	h.startWith(func(_ context.Context, in channels.Inbound) error { h.inbound <- in; return nil })
}

// startWith runs Start in the background with handler, and stops it at
// cleanup.
func (h *harness) startWith(handler channels.Handler) {
	h.t.Helper()
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

// waitReady waits until Ready reports nil.
func (h *harness) waitReady() {
	h.t.Helper()
	ctx := h.ctx()
	for h.ch.Ready(ctx) != nil {
		select {
		case <-ctx.Done():
			h.t.Fatalf("not ready: %v; logs:\n%s", h.ch.Ready(context.Background()), h.logs)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// startSocket starts the channel and waits for its Socket Mode connection.
func (h *harness) startSocket() {
	h.t.Helper()
	h.start()
	if err := h.fake.WaitConnections(h.ctx(), 1); err != nil {
		h.t.Fatalf("%v; logs:\n%s", err, h.logs)
	}
	h.waitReady()
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

// none checks that no inbound event is pending once a later marker event
// has arrived: events are handled in order, so anything sent before the
// marker would come first.
func (h *harness) none(ctx context.Context) {
	h.t.Helper()
	id, err := h.fake.SendEvent("EvMARKER", slacktest.Msg{Channel: "D0ANN", User: "U0ANN", Text: "marker"}.Event())
	if err != nil {
		h.t.Fatal(err)
	}
	if err := h.fake.WaitAck(ctx, id); err != nil {
		h.t.Fatal(err)
	}
	if in := h.next(); in.Text != "marker" {
		h.t.Fatalf("unexpected event before the marker: %+v", in)
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
