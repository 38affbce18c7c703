package telegram_test

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
	"github.com/switchboard-chat/switchboard/channels/telegram"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const token = "777:test-token-secret"

// harness is a Channel running against a fake Bot API.
type harness struct {
	*channeltest.Runner
	t    *testing.T
	fake *telegramtest.Server
	ch   *telegram.Channel
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
	logs := &channeltest.Log{}
	opts := telegram.Options{
		Token:       token,
		APIURL:      fake.URL(),
		Logger:      logs.Logger(),
		PollTimeout: 2 * time.Second,
		Retry:       channels.Retry{RetryMin: 10 * time.Millisecond, RetryMax: 50 * time.Millisecond},
	}
	if tweak != nil {
		tweak(&opts)
	}
	ch, err := telegram.New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return &harness{Runner: channeltest.NewRunner(t, ch, logs), t: t, fake: fake, ch: ch}
}

// waitPolling waits until the channel polls and reports ready.
func (h *harness) waitPolling() {
	h.t.Helper()
	if err := h.fake.WaitRequests(h.Ctx(), "getUpdates", 1); err != nil {
		h.t.Fatalf("channel never polled: %v; logs:\n%s", err, h.Log)
	}
	h.WaitReady()
}
