package main

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

// quorumConfig makes exec need two people of the oncall group, which
// includes the requester (dev, 700).
const quorumConfig = `approvals:
  groups:
    oncall: ["telegram:700", "telegram:1001", "telegram:1002"]
  rules:
    - tools: [exec]
      quorum: 2
      approvers: ["group:oncall"]
`

// approvalCard waits for the approval request in chat and returns it.
func approvalCard(ctx context.Context, t *testing.T, tg *telegramtest.Server, chat int64, after int) telegramtest.Message {
	t.Helper()
	for {
		for _, m := range tg.Messages(chat) {
			if m.ID > after && len(m.Buttons) > 0 && strings.Contains(m.Visible, "Approval needed") {
				return m
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("chat %d never got an approval request", chat)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestE2EQuorumAcrossReplicas: exec needs two people. The requester's own
// press counts nothing; approver A votes through replica 0 and every
// approver's message then shows "1 of 2" with its buttons kept; approver
// B votes through replica 1 and the command runs, once.
func TestE2EQuorumAcrossReplicas(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	tg, llm := fakes(t)
	base := externalEnv(t, tg, llm, "")
	base["SWITCHBOARD_ADMINS"] = "telegram:500"
	base["SWITCHBOARD_HTTP_ADMIN_TOKEN"] = "e2e-admin-token"
	withTelegramWebhook(base)
	var (
		hooks    []string
		replicas []*daemonProc
	)
	for i := range 2 {
		env := maps.Clone(base)
		env["SWITCHBOARD_REPLICA"] = []string{"replica-0", "replica-1"}[i]
		d := startReplica(ctx, t, env, quorumConfig)
		replicas = append(replicas, d)
		hooks = append(hooks, "http://"+d.http+"/webhooks/telegram")
	}
	eventually(ctx, t, "the webhook registered", func() bool { return tg.Webhook() != nil })

	const dev, alice, bob = 700, 1001, 1002
	tg.DeliverTo(hooks[0])
	mark := lastID(tg, dev)
	tg.SendText(dev, dev, "Dev", `please CALL_TOOL:exec {"command":"echo two-people-said-yes"}`)
	mine := approvalCard(ctx, t, tg, dev, mark)
	cardA, cardB := approvalCard(ctx, t, tg, alice, 0), approvalCard(ctx, t, tg, bob, 0)
	if !strings.Contains(cardB.Visible, "Needs 2 people to allow") {
		t.Fatalf("the request does not say it needs two people: %q", cardB.Visible)
	}
	answers := 0
	press := func(who int64, card telegramtest.Message, hook string) string {
		t.Helper()
		tg.DeliverTo(hook)
		tg.PressButton(who, who, card.ID, buttonOn(t, card, "Allow once"))
		answers++
		return lastAnswerText(ctx, t, tg, answers)
	}

	if a := press(dev, mine, hooks[0]); a != "You asked for this; another approver must decide." {
		t.Fatalf("the requester's own press answered %q", a)
	}
	if a := press(alice, cardA, hooks[0]); a != "Your vote is counted: 1 of 2." {
		t.Fatalf("A's vote answered %q", a)
	}
	edited := waitEdited(ctx, t, tg, bob, cardB.ID)
	if !strings.Contains(edited.Visible, "1 of 2 — ✅ telegram:1001") || len(edited.Buttons) == 0 {
		t.Fatalf("after one vote B's message is %q with buttons %v; want the vote shown and the buttons kept", edited.Visible, edited.Buttons)
	}
	if code, body := adminCall(t, replicas[1], "GET", "/api/v1/approvals", "e2e-admin-token", ""); code != 200 ||
		!strings.Contains(body, `"quorum":2`) || !strings.Contains(body, `"identity":"telegram:1001"`) {
		t.Fatalf("GET /api/v1/approvals = %d %s; want the quorum and A's vote", code, body)
	}
	if a := press(bob, edited, hooks[1]); !strings.HasPrefix(a, "Done") {
		t.Fatalf("B's vote answered %q", a)
	}
	newReplyContaining(ctx, t, tg, dev, mark, "two-people-said-yes")
	time.Sleep(500 * time.Millisecond) // a second run would deliver by now
	n := 0
	for _, m := range tg.Messages(dev) {
		if strings.Contains(m.Visible, "tool exec said") && strings.Contains(m.Visible, "two-people-said-yes") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the command's output reached the chat %d times, want 1", n)
	}
	final := waitEditedAgain(ctx, t, tg, alice, cardA.ID)
	if !strings.Contains(final.Visible, "telegram:1001, telegram:1002") || len(final.Buttons) != 0 {
		t.Errorf("A's message after the decision is %q with buttons %v; want both names and no buttons", final.Visible, final.Buttons)
	}
}

// waitEditedAgain waits until message id in chat shows no buttons (its
// decision) and returns it.
func waitEditedAgain(ctx context.Context, t *testing.T, tg *telegramtest.Server, chat int64, id int) telegramtest.Message {
	t.Helper()
	for {
		for _, m := range tg.Messages(chat) {
			if m.ID == id && m.Edits > 0 && len(m.Buttons) == 0 {
				return m
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("message %d in chat %d never showed its decision", id, chat)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
