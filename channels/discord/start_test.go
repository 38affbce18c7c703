package discord_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
	"github.com/switchboard-chat/switchboard/channels/discord"
	"github.com/switchboard-chat/switchboard/channels/discord/discordtest"
)

func TestNewValidatesOptions(t *testing.T) {
	t.Parallel()
	if _, err := discord.New(discord.Options{Token: " Bot  "}); err == nil || !strings.Contains(err.Error(), "discord.token") {
		t.Errorf("New without token: %v", err)
	}
	if _, err := discord.New(discord.Options{Token: "x", APIURL: "ftp://x"}); err == nil || !strings.Contains(err.Error(), "discord.api_url") {
		t.Errorf("New with a bad api url: %v", err)
	}
	ch, err := discord.New(discord.Options{Token: "Bot x"})
	if err != nil || ch.Platform() != "discord" {
		t.Fatalf("New = %v, %v", ch, err)
	}
	if err := ch.Ready(context.Background()); err == nil {
		t.Error("ready before Start")
	}
}

func TestReconnectResumesAndReplaysMissedEvents(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.startReady()
	h.fake.SendMessage(channelID, guildID, userID, "Ann", "before")
	if in := h.Next(); in.Text != "before" {
		t.Fatalf("got %+v", in)
	}

	// The gateway goes away: Ready says so until it is back.
	h.fake.SetGatewayDown(true)
	h.fake.DropConnection()
	h.WaitState(false)
	if err := h.ch.Ready(h.Ctx()); !strings.Contains(err.Error(), "gateway") {
		t.Errorf("Ready while disconnected = %v", err)
	}
	missed := h.fake.SendMessage(channelID, guildID, userID, "Ann", "while away")
	time.Sleep(50 * time.Millisecond) // a few failed reconnects (RetryMax is 50ms)
	if err := h.ch.Ready(h.Ctx()); err == nil {
		t.Error("ready while the gateway refuses connections")
	}

	h.fake.SetGatewayDown(false)
	h.WaitReady()
	if in := h.Next(); in.Text != "while away" || in.MessageID != missed {
		t.Errorf("replayed event = %+v", in)
	}
	if got := h.fake.Resumes(); got != 1 {
		t.Errorf("resumes = %d, want 1", got)
	}
	if got := len(h.fake.Identifies()); got != 1 {
		t.Errorf("identifies = %d, want the session resumed, not a new one", got)
	}
	h.fake.SendMessage(channelID, guildID, userID, "Ann", "after")
	if in := h.Next(); in.Text != "after" {
		t.Errorf("after reconnect got %+v", in)
	}
	logs := h.Log.String()
	if channeltest.CountLines(logs, "discord unreachable") != 1 || !strings.Contains(logs, "connection dropped") || !strings.Contains(logs, "reachable again") {
		t.Errorf("want one warning for the outage and a recovery line:\n%s", logs)
	}
}

func TestStartRecoversWhenAPIComesBack(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.fake.Fail(discordtest.RouteMe, 500, 0, 3)
	h.Start(nil)
	h.WaitReady()
	if got := h.fake.Requests(discordtest.RouteMe); got != 4 {
		t.Errorf("GET /users/@me called %d times, want 3 failures + 1 success", got)
	}
	logs := h.Log.String()
	if n := channeltest.CountLines(logs, "discord unreachable"); n != 1 {
		t.Errorf("%d warnings during one failure streak, want 1:\n%s", n, logs)
	}
	if strings.Contains(logs, token) {
		t.Errorf("logs leak the token:\n%s", logs)
	}
	h.fake.SendMessage(channelID, guildID, userID, "Ann", "hello")
	if in := h.Next(); in.Text != "hello" {
		t.Errorf("got %+v", in)
	}
}

func TestStartRejectsWrongToken(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.fake.SetToken("another-token")
	ctx := h.Ctx()
	err := h.ch.Start(ctx, func(context.Context, channels.Inbound) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "discord.token") {
		t.Fatalf("Start with a wrong token = %v", err)
	}
	if strings.Contains(err.Error(), token) {
		t.Errorf("error leaks the token: %v", err)
	}
	if err := h.ch.Ready(ctx); err == nil || !strings.Contains(err.Error(), "discord.token") {
		t.Errorf("Ready after a rejected token = %v, want the reason", err)
	}
}

func TestStartRejectsDisallowedIntents(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.fake.RejectIntents(1 << 15) // MESSAGE_CONTENT not enabled in the portal
	err := h.ch.Start(h.Ctx(), func(context.Context, channels.Inbound) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "4014") || !strings.Contains(err.Error(), "Message Content Intent") {
		t.Fatalf("Start with a disallowed intent = %v", err)
	}
}

func TestStartStopsWhileUnreachable(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.fake.SetGatewayDown(true)
	h.Start(nil)
	if err := h.fake.WaitRequests(h.Ctx(), discordtest.RouteGateway, 2); err != nil {
		t.Fatal(err)
	}
	if err := h.ch.Ready(h.Ctx()); err == nil || !strings.Contains(err.Error(), "gateway") {
		t.Errorf("Ready while the gateway is down = %v", err)
	}
	h.Stop() // fails the test if Start does not return nil
	n := h.fake.Requests(discordtest.RouteGateway)
	time.Sleep(150 * time.Millisecond) // RetryMax is 50ms: a live loop would call again
	if got := h.fake.Requests(discordtest.RouteGateway); got != n {
		t.Errorf("gateway asked %d more times after Start returned", got-n)
	}
}

// TestStartStopsCleanly runs alone (not parallel), so it can check that a
// stopped channel leaves no goroutine behind.
func TestStartStopsCleanly(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	fake := discordtest.NewServer()
	h := newHarnessOn(t, fake, nil)
	h.startReady()
	ctx := h.Ctx()
	if err := h.ch.Start(ctx, func(context.Context, channels.Inbound) error { return nil }); err == nil {
		t.Error("second concurrent Start succeeded")
	}
	h.fake.SendMessage(channelID, guildID, userID, "Ann", "first run")
	if in := h.Next(); in.Text != "first run" {
		t.Errorf("got %+v", in)
	}
	h.Stop()
	if err := h.ch.Ready(ctx); err == nil || !strings.Contains(err.Error(), "stopped") {
		t.Errorf("Ready after stop = %v", err)
	}
	if got := fake.Connections(); got != 0 {
		t.Errorf("%d gateway connections left open", got)
	}

	// A stopped channel can start again.
	h.startReady()
	h.fake.SendMessage(channelID, guildID, userID, "Ann", "second run")
	if in := h.Next(); in.Text != "second run" {
		t.Errorf("after restart got %+v", in)
	}
	if got := len(fake.Identifies()); got != 2 {
		t.Errorf("identifies = %d: a clean stop ends the session, so a restart identifies anew", got)
	}
	h.Stop()
	fake.Close()
}

func TestCheck(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	ctx := h.Ctx()
	desc, err := h.ch.Check(ctx)
	if err != nil || !strings.Contains(desc, discordtest.BotID) || !strings.Contains(desc, "gateway ws://") {
		t.Errorf("Check = %q, %v", desc, err)
	}
	h.fake.RejectIntents(1 << 15)
	if _, err := h.ch.Check(ctx); err == nil || !strings.Contains(err.Error(), "Message Content Intent") {
		t.Errorf("Check without the intent = %v", err)
	}
	h.fake.SetToken("another-token")
	if _, err := h.ch.Check(ctx); err == nil || !strings.Contains(err.Error(), "discord.token") || strings.Contains(err.Error(), token) {
		t.Errorf("Check with a wrong token = %v", err)
	}
}
