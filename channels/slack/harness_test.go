package slack_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
	"github.com/switchboard-chat/switchboard/channels/slack"
	"github.com/switchboard-chat/switchboard/channels/slack/slacktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	botToken = "xoxb-test-bot-token-secret"
	appToken = "xapp-test-app-token-secret"
	secret   = "signing-secret-for-tests"
)

// harness is a Channel running against a fake Slack.
type harness struct {
	*channeltest.Runner
	t    *testing.T
	fake *slacktest.Server
	ch   *slack.Channel
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
	logs := &channeltest.Log{}
	opts := slack.Options{
		BotToken: botToken,
		AppToken: appToken,
		APIURL:   fake.URL(),
		Logger:   logs.Logger(),
		Retry:    channels.Retry{RetryMin: 10 * time.Millisecond, RetryMax: 50 * time.Millisecond},
	}
	if tweak != nil {
		tweak(&opts)
	}
	ch, err := slack.New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return &harness{Runner: channeltest.NewRunner(t, ch, logs), t: t, fake: fake, ch: ch}
}

// startSocket starts the channel and waits for its Socket Mode connection.
func (h *harness) startSocket() {
	h.t.Helper()
	h.Start(nil)
	if err := h.fake.WaitConnections(h.Ctx(), 1); err != nil {
		h.t.Fatalf("%v; logs:\n%s", err, h.Log)
	}
	h.WaitReady()
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
	if in := h.Next(); in.Text != "marker" {
		h.t.Fatalf("unexpected event before the marker: %+v", in)
	}
}
