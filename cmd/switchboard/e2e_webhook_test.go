package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/channels/discord/discordtest"
	"github.com/switchboard-chat/switchboard/channels/slack/slacktest"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

const (
	e2eHookURL    = "https://bot.example.test/webhooks/telegram"
	e2eHookSecret = "e2e-webhook-secret_0123456789"
)

// withTelegramWebhook puts Telegram in webhook mode at e2eHookURL.
func withTelegramWebhook(env map[string]string) {
	env["SWITCHBOARD_TELEGRAM_MODE"] = "webhook"
	env["SWITCHBOARD_TELEGRAM_WEBHOOK_URL"] = e2eHookURL
	env["SWITCHBOARD_TELEGRAM_WEBHOOK_SECRET"] = e2eHookSecret
}

// deliverToReplicas makes the fake post each webhook update to any of
// the replicas, as a load balancer in front of them does.
func deliverToReplicas(tg *telegramtest.Server, rs *replicaSet) {
	var targets []string
	for _, a := range rs.addrs {
		targets = append(targets, "http://"+a+"/webhooks/telegram")
	}
	tg.DeliverTo(targets...)
}

// waitWebhook waits until a replica registered the webhook.
func waitWebhook(ctx context.Context, t *testing.T, tg *telegramtest.Server) {
	t.Helper()
	for tg.Webhook() == nil {
		select {
		case <-ctx.Done():
			t.Fatal("no replica registered the webhook")
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// platformChats sends numbered messages into chats of one platform and
// counts the answers to each.
type platformChats struct {
	name    string
	chats   int
	send    func(chat, n int, text string)
	answers func(chat int) []string // the bot's answers in chat, any order
}

// TestE2EReplicasAllPlatforms runs three replicas on one PostgreSQL and
// Redis with Telegram in webhook mode behind a "load balancer" (the fake
// posts each update to a random replica and retries anything but 200),
// Slack over Socket Mode (a connection per replica; envelopes spread and
// redelivered when unacknowledged) and Discord (one replica holds the
// gateway). 500 messages across 50 chats are sent while one replica is
// kill -9'd and another SIGTERM'd and restarted: every message is
// answered, twice at most when its reply was in flight at the kill. Then
// the webhook leader dies and another replica takes over.
func TestE2EReplicasAllPlatforms(t *testing.T) {
	ctx := testCtx(t, 4*time.Minute)
	tg, llm := fakes(t)
	sl := slacktest.NewServer(slackBot, slackApp)
	t.Cleanup(sl.Close)
	sl.Spread(time.Second)
	dc := discordtest.NewServer()
	t.Cleanup(dc.Close)
	base := externalEnv(t, tg, llm, "")
	withSlack(base, sl)
	withDiscord(base, dc)
	withTelegramWebhook(base)
	// One reply per message, so that every message's answer can be
	// counted (steer and collect answer several in one reply).
	base["SWITCHBOARD_CONVERSATION_QUEUE"] = "followup"
	rs := startReplicas(ctx, t, base, 3)
	deliverToReplicas(tg, rs)
	if err := sl.WaitConnections(ctx, 3); err != nil {
		t.Fatalf("Socket Mode connections: %v", err)
	}

	lead := rs.leader(ctx, "leader:telegram:webhook")
	rs.leader(ctx, "leader:discord:gateway")
	waitWebhook(ctx, t, tg)
	if w := tg.Webhook(); w.URL != e2eHookURL || w.Secret != e2eHookSecret || w.DropPendingUpdates {
		t.Fatalf("registered webhook %+v", w)
	}
	if got := tg.Requests("setWebhook"); got != 1 {
		t.Errorf("setWebhook called %d times by 3 replicas, want 1", got)
	}
	if n := len(dc.Identifies()); n != 1 {
		t.Errorf("%d Discord gateway sessions opened by 3 replicas, want 1", n)
	}
	for i := range rs.procs {
		if name, _ := rs.readyz(i); name != fmt.Sprintf("replica-%d", i) {
			t.Errorf("replica %d calls itself %q in /readyz", i, name)
		}
	}

	var slackEvents sync.Mutex
	nextEvent := 0
	platforms := []platformChats{
		{name: "telegram", chats: 30,
			send: func(c, _ int, text string) { tg.SendText(int64(7000+c), int64(7000+c), "Ann", text) },
			answers: func(c int) []string {
				var out []string
				for _, m := range tg.Messages(int64(7000 + c)) {
					out = append(out, m.Visible)
				}
				return out
			}},
		{name: "slack", chats: 10,
			send: func(c, _ int, text string) {
				slackEvents.Lock()
				nextEvent++
				id := fmt.Sprintf("Ev%06d", nextEvent)
				slackEvents.Unlock()
				if _, err := sl.SendEvent(id, slacktest.Msg{Channel: fmt.Sprintf("D%08d", c), User: fmt.Sprintf("U%08d", c), Text: text}.Event()); err != nil {
					t.Errorf("slack send: %v", err)
				}
			},
			answers: func(c int) []string {
				var out []string
				for _, m := range posted(sl, fmt.Sprintf("D%08d", c)) {
					out = append(out, m.Text)
				}
				return out
			}},
		{name: "discord", chats: 10,
			send: func(c, _ int, text string) {
				dc.SendMessage(fmt.Sprintf("81000000000000%04d", c), "", fmt.Sprintf("71000000000000%04d", c), "Ann", text)
			},
			answers: func(c int) []string {
				var out []string
				for _, m := range dc.Messages(fmt.Sprintf("81000000000000%04d", c)) {
					if m.AuthorID == discordtest.BotID {
						out = append(out, m.Content)
					}
				}
				return out
			}},
	}
	const perChat = 10
	victim, restarted := (lead+1)%3, (lead+2)%3
	var wg sync.WaitGroup
	for _, p := range platforms {
		for c := range p.chats {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for m := range perChat {
					p.send(c, m, fmt.Sprintf("SAY: %s reply %d-%d", p.name, c, m))
					time.Sleep(300 * time.Millisecond)
				}
			}()
		}
	}
	time.Sleep(time.Second)
	rs.procs[victim].kill9()
	time.Sleep(500 * time.Millisecond)
	rs.procs[restarted].stop()
	rs.start(ctx, restarted)
	wg.Wait()

	total, lost, doubled := 0, 0, 0
	for _, p := range platforms {
		for c := range p.chats {
			count := map[string]int{}
			for {
				clear(count)
				for _, a := range p.answers(c) {
					count[a]++
				}
				missing := 0
				for m := range perChat {
					if count[fmt.Sprintf("%s reply %d-%d", p.name, c, m)] == 0 {
						missing++
					}
				}
				if missing == 0 || ctx.Err() != nil {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			for m := range perChat {
				total++
				switch n := count[fmt.Sprintf("%s reply %d-%d", p.name, c, m)]; {
				case n == 0:
					lost++
					t.Errorf("%s chat %d: message %d never answered", p.name, c, m)
				case n > 1:
					doubled += n - 1
				}
			}
		}
	}
	attempts, failures := tg.WebhookStats()
	resent, dropped := sl.Redelivered()
	t.Logf("%d messages: %d lost, %d answered twice; telegram: %d webhook posts, %d refused or unanswered; slack: %d envelopes redelivered, %d given up; discord: %d resumes",
		total, lost, doubled, attempts, failures, resent, dropped, dc.Resumes())
	// Only replies a kill -9 cut off between the send and its mark can go
	// out twice: at most one per chat.
	if doubled > 50 {
		t.Errorf("%d duplicate answers", doubled)
	}
	if pending := tg.Pending(); len(pending) > 0 {
		t.Errorf("updates never answered 200: %v", pending)
	}
	if !strings.Contains(rs.procs[lead].out.String(), "telegram webhook registered") {
		t.Error("the leader did not log the registration")
	}

	// The webhook leader dies: another replica takes the leadership over
	// (the bound: 10 s) and messages keep being answered.
	rs.procs[lead].kill9()
	killed := time.Now()
	within, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	next := rs.leader(within, "leader:telegram:webhook", lead, victim)
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
