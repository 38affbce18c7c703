package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

const (
	e2eHookURL    = "https://bot.example.test/webhooks/telegram"
	e2eHookSecret = "e2e-webhook-secret_0123456789"
)

// TestE2ETelegramWebhookAcrossReplicas runs three replicas in webhook
// mode behind a "load balancer" (the fake posts each update to a random
// replica and retries on anything but 200). One replica registers the
// webhook; 500 messages across 50 chats are sent while one replica is
// kill -9'd and another SIGTERM'd and restarted: every message is
// answered, and answered twice only if its reply was in flight at the
// kill.
func TestE2ETelegramWebhookAcrossReplicas(t *testing.T) {
	ctx := testCtx(t, 4*time.Minute)
	tg, llm := fakes(t)
	base := externalEnv(t, tg, llm, "")
	base["SWITCHBOARD_TELEGRAM_MODE"] = "webhook"
	base["SWITCHBOARD_TELEGRAM_WEBHOOK_URL"] = e2eHookURL
	base["SWITCHBOARD_TELEGRAM_WEBHOOK_SECRET"] = e2eHookSecret
	// One reply per message, so that every message's answer can be
	// counted (steer and collect answer several in one reply).
	base["SWITCHBOARD_CONVERSATION_QUEUE"] = "followup"
	rs := startReplicas(ctx, t, base, 3)
	var targets []string
	for _, a := range rs.addrs {
		targets = append(targets, "http://"+a+"/webhooks/telegram")
	}
	tg.DeliverTo(targets...)

	lead := rs.leader(ctx, "leader:telegram:webhook")
	for tg.Webhook() == nil {
		select {
		case <-ctx.Done():
			t.Fatal("no replica registered the webhook")
		case <-time.After(20 * time.Millisecond):
		}
	}
	if w := tg.Webhook(); w.URL != e2eHookURL || w.Secret != e2eHookSecret || w.DropPendingUpdates {
		t.Fatalf("registered webhook %+v", w)
	}
	if got := tg.Requests("setWebhook"); got != 1 {
		t.Errorf("setWebhook called %d times by 3 replicas, want 1", got)
	}
	for i := range rs.procs {
		if name, _ := rs.readyz(i); name != fmt.Sprintf("replica-%d", i) {
			t.Errorf("replica %d calls itself %q in /readyz", i, name)
		}
	}

	const chats, perChat = 50, 10
	victim, restarted := (lead+1)%3, (lead+2)%3
	var wg sync.WaitGroup
	for c := range chats {
		wg.Add(1)
		go func() {
			defer wg.Done()
			chat := int64(7000 + c)
			for m := range perChat {
				tg.SendText(chat, chat, "Ann", fmt.Sprintf("SAY: reply %d-%d", c, m))
				time.Sleep(300 * time.Millisecond)
			}
		}()
	}
	time.Sleep(time.Second)
	rs.procs[victim].kill9()
	time.Sleep(500 * time.Millisecond)
	rs.procs[restarted].stop()
	rs.start(ctx, restarted)
	wg.Wait()

	lost, doubled := 0, 0
	for c := range chats {
		chat := int64(7000 + c)
		got, err := waitAnswers(ctx, tg, chat, perChat)
		if err != nil {
			t.Error(err)
		}
		count := map[string]int{}
		for _, m := range got {
			count[m.Visible]++
		}
		for m := range perChat {
			switch n := count[fmt.Sprintf("reply %d-%d", c, m)]; {
			case n == 0:
				lost++
			case n > 1:
				doubled += n - 1
			}
		}
	}
	attempts, failures := tg.WebhookStats()
	t.Logf("%d messages: %d lost, %d answered twice; %d webhook posts, %d refused or unanswered",
		chats*perChat, lost, doubled, attempts, failures)
	if lost > 0 {
		t.Errorf("%d of %d messages never answered", lost, chats*perChat)
	}
	// Only replies a kill -9 cut off between the send and its mark can go
	// out twice: at most one per chat.
	if doubled > chats {
		t.Errorf("%d duplicate answers", doubled)
	}
	if pending := tg.Pending(); len(pending) > 0 {
		t.Errorf("updates never answered 200: %v", pending)
	}
	if !strings.Contains(rs.procs[lead].out.String(), "telegram webhook registered") {
		t.Error("the leader did not log the registration")
	}

	// The leader dies: another replica takes the webhook leadership over
	// (the bound: 10 s) and messages keep being answered.
	rs.procs[lead].kill9()
	killed := time.Now()
	within, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	next := rs.leader(within, "leader:telegram:webhook", lead)
	t.Logf("webhook leadership moved from replica %d to %d in %v", lead, next, time.Since(killed).Round(time.Millisecond))
	tg.SendText(7000, 7000, "Ann", "SAY: after the leader died")
	if _, err := waitNewAnswer(ctx, tg, 7000, "after the leader died"); err != nil {
		t.Error(err)
	}
}

// waitNewAnswer waits for an answer with text in chat.
func waitNewAnswer(ctx context.Context, tg *telegramtest.Server, chat int64, text string) (telegramtest.Message, error) {
	for {
		for _, m := range tg.Messages(chat) {
			if m.Visible == text {
				return m, nil
			}
		}
		select {
		case <-ctx.Done():
			return telegramtest.Message{}, fmt.Errorf("chat %d: no answer %q: %w", chat, text, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
