package discord_test

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
	"github.com/switchboard-chat/switchboard/channels/discord"
	"github.com/switchboard-chat/switchboard/channels/discord/discordtest"
)

// Every test runs its own fake Discord: the channel redirects its REST
// calls through its own HTTP client and takes the gateway URL from the
// fake, so nothing is shared between tests and they may run in parallel.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const token = "MTEwMDAwMDAwMDAwMDAwMDAwMQ.test.secret-token-value"

// Ids used across tests.
const (
	guildID   = "300000000000000001"
	channelID = "300000000000000002"
	dmID      = "300000000000000003"
	userID    = "400000000000000001"
	otherID   = "400000000000000002"
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

// harness is a Channel running against a fake Discord.
type harness struct {
	t       *testing.T
	fake    *discordtest.Server
	ch      *discord.Channel
	logs    *logBuffer
	inbound chan channels.Inbound
	cancel  context.CancelFunc
	done    chan error
}

// newHarness builds a Channel against a new fake. tweak may adjust the
// options before New.
func newHarness(t *testing.T, tweak func(*discord.Options)) *harness {
	t.Helper()
	fake := discordtest.NewServer()
	t.Cleanup(fake.Close)
	return newHarnessOn(t, fake, tweak)
}

// newHarnessOn builds a Channel against an existing fake.
func newHarnessOn(t *testing.T, fake *discordtest.Server, tweak func(*discord.Options)) *harness {
	t.Helper()
	logs := &logBuffer{}
	opts := discord.Options{
		Token:    token,
		APIURL:   fake.URL(),
		Logger:   slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})),
		RetryMin: 10 * time.Millisecond,
		RetryMax: 50 * time.Millisecond,
		// Most tests look at every message; TestGuildMessagesNeedMention
		// covers the default.
		AllGuildMessages: true,
	}
	if tweak != nil {
		tweak(&opts)
	}
	ch, err := discord.New(opts)
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
	case <-time.After(15 * time.Second):
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

// waitReady waits until the gateway session is live.
func (h *harness) waitReady() {
	h.t.Helper()
	h.waitState(true)
}

// waitState waits until Ready reports ready (or not).
func (h *harness) waitState(ready bool) {
	h.t.Helper()
	ctx := h.ctx()
	for (h.ch.Ready(ctx) == nil) != ready {
		select {
		case <-ctx.Done():
			h.t.Fatalf("Ready = %v, want ready=%v; logs:\n%s", h.ch.Ready(ctx), ready, h.logs)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// startReady starts the channel and waits until it is connected.
func (h *harness) startReady() {
	h.t.Helper()
	h.start(nil)
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

// to is the address of a channel id.
func to(id string) channels.Address { return channels.Address{Platform: "discord", ChatID: id} }

func countLines(s, substr string) int {
	n := 0
	for line := range strings.Lines(s) {
		if strings.Contains(line, substr) {
			n++
		}
	}
	return n
}
