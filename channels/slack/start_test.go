package slack_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
	"github.com/switchboard-chat/switchboard/channels/slack"
	"github.com/switchboard-chat/switchboard/channels/slack/slacktest"
)

func TestNewValidatesOptions(t *testing.T) {
	if _, err := slack.New(slack.Options{AppToken: appToken}); err == nil || !strings.Contains(err.Error(), "slack.bot_token") {
		t.Errorf("New without bot token: %v", err)
	}
	_, err := slack.New(slack.Options{BotToken: botToken})
	if err == nil || !strings.Contains(err.Error(), "slack.app_token") || !strings.Contains(err.Error(), "slack.signing_secret") {
		t.Errorf("New without a way to receive events: %v", err)
	}
	ch, err := slack.New(slack.Options{BotToken: botToken, SigningSecret: secret})
	if err != nil {
		t.Fatalf("New with a signing secret: %v", err)
	}
	if ch.Platform() != "slack" {
		t.Errorf("Platform() = %q", ch.Platform())
	}
	if ch.Ready(context.Background()) == nil {
		t.Error("ready before Start")
	}
}

func TestReconnectAfterConnectionDrops(t *testing.T) {
	h := newHarness(t, nil)
	h.startSocket()
	ctx := h.Ctx()
	h.fake.DropConnections()
	if err := h.fake.WaitConnections(ctx, 2); err != nil {
		t.Fatalf("no reconnect: %v; logs:\n%s", err, h.Log)
	}
	h.WaitReady()
	env, err := h.fake.SendEvent("EvAfter", slacktest.Msg{Channel: "D0ANN", User: "U0ANN", Text: "still there?"}.Event())
	if err != nil {
		t.Fatal(err)
	}
	if in := h.Next(); in.Text != "still there?" {
		t.Errorf("after reconnect got %+v", in)
	}
	if err := h.fake.WaitAck(ctx, env); err != nil {
		t.Error(err)
	}
	if !strings.Contains(h.Log.String(), "reconnecting") {
		t.Errorf("reconnect not logged:\n%s", h.Log)
	}

	// Slack's routine "disconnect" request is followed as well.
	if err := h.fake.RequestDisconnect(); err != nil {
		t.Fatal(err)
	}
	if err := h.fake.WaitConnections(ctx, 3); err != nil {
		t.Fatalf("no reconnect after a disconnect request: %v", err)
	}
	h.WaitReady()
}

func TestRetriesWhileSlackIsDown(t *testing.T) {
	h := newHarness(t, nil)
	ctx := h.Ctx()
	h.fake.FailHTTP("auth.test", 503, 3)
	h.fake.FailHTTP("apps.connections.open", 502, 2)
	h.Start(nil)
	if err := h.fake.WaitRequests(ctx, "auth.test", 3); err != nil {
		t.Fatal(err)
	}
	if err := h.fake.WaitConnections(ctx, 1); err != nil {
		t.Fatalf("%v; logs:\n%s", err, h.Log)
	}
	h.WaitReady()
	// Ready turns nil a moment before the recovery line is written.
	waitLogged(ctx, t, h.Log, "slack reachable again")
	if got := h.fake.Requests("auth.test"); got != 4 {
		t.Errorf("auth.test called %d times, want 3 failures + 1 success", got)
	}
	if got := h.fake.Requests("apps.connections.open"); got != 3 {
		t.Errorf("apps.connections.open called %d times, want 2 failures + 1 success", got)
	}
	logs := h.Log.String()
	// auth.test and Socket Mode failures are one outage, logged once,
	// ended when the connection is up.
	if n := channeltest.CountLines(logs, "slack unreachable"); n != 1 {
		t.Errorf("%d warnings for one failure streak, want 1:\n%s", n, logs)
	}
	if !strings.Contains(logs, "slack reachable again") || !strings.Contains(logs, "failed_attempts=5") {
		t.Errorf("recovery not logged:\n%s", logs)
	}
	for _, s := range []string{botToken, appToken} {
		if strings.Contains(logs, s) {
			t.Errorf("logs leak a token:\n%s", logs)
		}
	}
}

// waitLogged waits until logs contain s.
func waitLogged(ctx context.Context, t *testing.T, logs *channeltest.Log, s string) {
	t.Helper()
	for !strings.Contains(logs.String(), s) {
		select {
		case <-ctx.Done():
			t.Fatalf("never logged %q:\n%s", s, logs)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func TestReadyReportsOutage(t *testing.T) {
	h := newHarness(t, nil)
	h.fake.FailHTTP("auth.test", 503, 1000)
	h.Start(nil)
	ctx := h.Ctx()
	if err := h.fake.WaitRequests(ctx, "auth.test", 3); err != nil {
		t.Fatal(err)
	}
	err := h.ch.Ready(ctx)
	if err == nil || !strings.Contains(err.Error(), "auth.test") || !strings.Contains(err.Error(), "503") {
		t.Errorf("Ready while unreachable = %v, want the auth.test error", err)
	}
	h.Stop()
	n := h.fake.Requests("auth.test")
	time.Sleep(100 * time.Millisecond) // RetryMax is 50ms: a live loop would call again
	if got := h.fake.Requests("auth.test"); got != n {
		t.Errorf("auth.test called %d more times after Start returned", got-n)
	}
}

func TestRejectedTokens(t *testing.T) {
	t.Run("bot token", func(t *testing.T) {
		h := newHarness(t, func(o *slack.Options) { o.BotToken = "xoxb-wrong-secret" })
		err := h.ch.Start(h.Ctx(), func(context.Context, channels.Inbound) error { return nil })
		if err == nil || !strings.Contains(err.Error(), "slack.bot_token") || !strings.Contains(err.Error(), "invalid_auth") {
			t.Fatalf("Start with a wrong bot token = %v", err)
		}
		if strings.Contains(err.Error(), "xoxb-wrong-secret") {
			t.Errorf("error leaks the token: %v", err)
		}
		if h.ch.Ready(context.Background()) == nil {
			t.Error("ready with a rejected token")
		}
	})
	t.Run("app token", func(t *testing.T) {
		h := newHarness(t, func(o *slack.Options) { o.AppToken = "xapp-wrong-secret" })
		err := h.ch.Start(h.Ctx(), func(context.Context, channels.Inbound) error { return nil })
		if err == nil || !strings.Contains(err.Error(), "slack.app_token") {
			t.Fatalf("Start with a wrong app token = %v", err)
		}
		if strings.Contains(err.Error(), "xapp-wrong-secret") {
			t.Errorf("error leaks the token: %v", err)
		}
	})
}

func TestStartStopsCleanly(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	fake := slacktest.NewServer(botToken, appToken)
	h := newHarnessOn(t, fake, nil)
	h.startSocket()
	ctx := h.Ctx()
	if err := h.ch.Start(ctx, func(context.Context, channels.Inbound) error { return nil }); err == nil {
		t.Error("second concurrent Start succeeded")
	}
	h.Stop()
	if h.ch.Ready(ctx) == nil {
		t.Error("ready after stop")
	}

	// A stopped channel can start again.
	h.startSocket()
	if _, err := fake.SendEvent("Ev2", slacktest.Msg{Channel: "D0ANN", User: "U0ANN", Text: "second run"}.Event()); err != nil {
		t.Fatal(err)
	}
	if in := h.Next(); in.Text != "second run" {
		t.Errorf("after restart got %+v", in)
	}
	h.Stop()
	fake.Close()
}

func TestEventsAPIOnlyModeIsReadyAfterAuth(t *testing.T) {
	h := newHarness(t, func(o *slack.Options) { o.AppToken = ""; o.SigningSecret = secret })
	h.Start(nil)
	h.WaitReady()
	if n := h.fake.Requests("apps.connections.open"); n != 0 {
		t.Errorf("Events API mode opened Socket Mode %d times", n)
	}
}

func TestCheck(t *testing.T) {
	h := newHarness(t, nil)
	desc, err := h.ch.Check(h.Ctx())
	if err != nil || !strings.Contains(desc, slacktest.BotUserID) || !strings.Contains(desc, "Socket Mode") {
		t.Errorf("Check = %q, %v", desc, err)
	}
	bad := newHarness(t, func(o *slack.Options) { o.AppToken = "xapp-wrong" })
	if _, err := bad.ch.Check(bad.Ctx()); err == nil || !strings.Contains(err.Error(), "slack.app_token") {
		t.Errorf("Check with a wrong app token = %v", err)
	}
	bad = newHarness(t, func(o *slack.Options) { o.BotToken = "xoxb-wrong" })
	if _, err := bad.ch.Check(bad.Ctx()); err == nil || !strings.Contains(err.Error(), "slack.bot_token") {
		t.Errorf("Check with a wrong bot token = %v", err)
	}
}
