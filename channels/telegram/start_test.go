package telegram_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
	"github.com/switchboard-chat/switchboard/channels/telegram"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

func TestNewNeedsToken(t *testing.T) {
	if _, err := telegram.New(telegram.Options{}); err == nil || !strings.Contains(err.Error(), "telegram.token") {
		t.Errorf("New without token: %v", err)
	}
}

func TestStartRecoversWhenAPIComesBack(t *testing.T) {
	h := newHarness(t, nil)
	ctx := h.Ctx()
	if err := h.ch.Ready(ctx); err == nil {
		t.Error("ready before Start")
	}
	h.fake.SetOffline(true)
	h.Start(nil)
	if err := h.fake.WaitRequests(ctx, "getMe", 5); err != nil {
		t.Fatal(err)
	}
	err := h.ch.Ready(ctx)
	if err == nil || !strings.Contains(err.Error(), "getMe") {
		t.Errorf("Ready while unreachable = %v, want the getMe error", err)
	}
	if strings.Contains(err.Error(), token) {
		t.Errorf("Ready leaks the token: %v", err)
	}
	if n := channeltest.CountLines(h.Log.String(), "telegram unreachable"); n != 1 {
		t.Errorf("%d warnings during one failure streak, want 1:\n%s", n, h.Log)
	}

	h.fake.SetOffline(false)
	h.waitPolling()
	if !strings.Contains(h.Log.String(), "telegram reachable again") {
		t.Errorf("recovery not logged:\n%s", h.Log)
	}
	h.fake.SendText(1, 1, "Ann", "hello again")
	if in := h.Next(); in.Text != "hello again" {
		t.Errorf("after recovery got %+v", in)
	}
	if strings.Contains(h.Log.String(), token) {
		t.Errorf("logs leak the token:\n%s", h.Log)
	}
}

func TestStartRetriesGetMeFailures(t *testing.T) {
	h := newHarness(t, nil)
	h.fake.Fail("getMe", 500, 0, 3)
	h.fake.Fail("deleteWebhook", 502, 0, 1)
	h.Start(nil)
	h.waitPolling()
	if got := h.fake.Requests("getMe"); got != 5 {
		t.Errorf("getMe called %d times, want 3 failures + 2 successes", got)
	}
}

func TestPollingOutageReportedByReady(t *testing.T) {
	h := newHarness(t, nil)
	h.Start(nil)
	h.waitPolling()
	ctx := h.Ctx()
	polls := h.fake.Requests("getUpdates")
	h.fake.Fail("getUpdates", 409, 0, 2)
	for h.ch.Ready(ctx) == nil {
		if err := h.fake.WaitRequests(ctx, "getUpdates", polls+1); err != nil {
			t.Fatalf("Ready stayed nil through the conflict: %v", err)
		}
		polls = h.fake.Requests("getUpdates")
	}
	if err := h.ch.Ready(ctx); !strings.Contains(err.Error(), "409") {
		t.Errorf("Ready = %v, want the 409", err)
	}
	h.waitPolling() // the library keeps polling and recovers
	h.fake.SendText(2, 2, "Bo", "still here")
	if in := h.Next(); in.Text != "still here" {
		t.Errorf("got %+v", in)
	}
}

func TestStartRejectsWrongToken(t *testing.T) {
	fake := telegramtest.NewServer("1:other-token")
	defer fake.Close()
	h := newHarnessOn(t, fake, nil)
	ctx := h.Ctx()
	err := h.ch.Start(ctx, func(context.Context, channels.Inbound) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "telegram.token") {
		t.Fatalf("Start with a wrong token = %v", err)
	}
	if strings.Contains(err.Error(), token) {
		t.Errorf("error leaks the token: %v", err)
	}
	if h.ch.Ready(ctx) == nil {
		t.Error("ready with a rejected token")
	}
}

func TestStartStopsCleanly(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	fake := telegramtest.NewServer(token)
	h := newHarnessOn(t, fake, func(o *telegram.Options) {
		o.Commands = []telegram.Command{{Name: "help", Description: "Show help"}}
	})
	h.Start(nil)
	h.waitPolling()
	ctx := h.Ctx()
	if err := h.ch.Start(ctx, func(context.Context, channels.Inbound) error { return nil }); err == nil {
		t.Error("second concurrent Start succeeded")
	}
	// The menu is registered while polling starts. The fake counts a call
	// when it arrives and stores the commands after reading them: wait for
	// the commands, not the call.
	h.WaitUntil("the commands are registered", func() bool { return len(fake.Commands()) > 0 })
	if got := fake.Commands(); len(got) != 1 || got[0].Command != "help" || got[0].Description != "Show help" {
		t.Errorf("commands = %+v", got)
	}
	if got := fake.Requests("deleteWebhook"); got != 1 {
		t.Errorf("deleteWebhook called %d times", got)
	}
	h.Stop()
	if h.ch.Ready(ctx) == nil {
		t.Error("ready after stop")
	}

	// A stopped channel can start again, and carries on from its offset.
	h.Start(nil)
	h.waitPolling()
	h.fake.SendText(6, 6, "Fi", "second run")
	if in := h.Next(); in.Text != "second run" {
		t.Errorf("after restart got %+v", in)
	}
	h.Stop()
	fake.Close()
}

func TestStartStopsWhileUnreachable(t *testing.T) {
	h := newHarness(t, nil)
	h.fake.SetOffline(true)
	h.Start(nil)
	if err := h.fake.WaitRequests(h.Ctx(), "getMe", 2); err != nil {
		t.Fatal(err)
	}
	h.Stop() // fails the test if Start does not return nil
	n := h.fake.Requests("getMe")
	time.Sleep(100 * time.Millisecond) // RetryMax is 50ms: a live loop would call again
	if got := h.fake.Requests("getMe"); got != n {
		t.Errorf("getMe called %d more times after Start returned", got-n)
	}
}

// A command menu the Bot API refuses is logged and does not keep the
// channel from polling: the menu is registered beside the first poll.
func TestRefusedCommandMenuDoesNotStopPolling(t *testing.T) {
	h := newHarness(t, func(o *telegram.Options) {
		o.Commands = []telegram.Command{{Name: "Bad Name", Description: "refused: not a command name"}}
	})
	h.Start(nil)
	h.waitPolling()
	if err := h.fake.WaitRequests(h.Ctx(), "setMyCommands", 1); err != nil {
		t.Fatalf("the menu was never sent: %v", err)
	}
	h.WaitUntil("the refused menu is logged", func() bool {
		return strings.Contains(h.Log.String(), "telegram refused the command menu")
	})
	if got := h.fake.Commands(); len(got) != 0 {
		t.Errorf("commands = %+v; want none registered", got)
	}
	h.Stop()
}

// The command menu does not hold up polling: while the Bot API has not
// answered setMyCommands, the channel already polls and reports ready.
func TestCommandMenuDoesNotDelayPolling(t *testing.T) {
	fake := telegramtest.NewServer(token)
	t.Cleanup(fake.Close)
	release := fake.Hold("setMyCommands")
	defer release()
	h := newHarnessOn(t, fake, func(o *telegram.Options) {
		o.Commands = []telegram.Command{{Name: "help", Description: "Show help"}}
	})
	h.Start(nil)
	if err := fake.WaitRequests(h.Ctx(), "setMyCommands", 1); err != nil {
		t.Fatalf("the menu was never sent: %v", err)
	}
	h.waitPolling() // with setMyCommands still unanswered
	if got := fake.Commands(); len(got) != 0 {
		t.Fatalf("commands = %+v while setMyCommands is held; the test's hold did not hold", got)
	}
	release()
	h.WaitUntil("the commands are registered after the release", func() bool { return len(fake.Commands()) == 1 })
	h.Stop()
}
