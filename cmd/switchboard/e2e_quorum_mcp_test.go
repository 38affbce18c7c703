package main

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
	"github.com/switchboard-chat/switchboard/tools/mcp/mcptest"
)

// TestE2EQuorumMCPGrant: an MCP grant request matched by approvals.rules
// (the server's tool group) needs two people, across two replicas. The
// person the grant is for is an approver too, but their own press counts
// nothing; approver A votes through replica 0 and B's message then shows
// "1 of 2" with its buttons kept; B approves through replica 1, the person
// is told once, and the tool works.
func TestE2EQuorumMCPGrant(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	srv, err := mcptest.HTTP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close) // after the daemons stop (cleanups run last-in first-out)
	tg, llm := fakes(t)
	llm.Handle(toolBrain(map[string]func(string) llmtest.ToolCall{
		"echo": func(text string) llmtest.ToolCall {
			return llmtest.ToolCall{Name: "mcp_kit_echo", Arguments: `{"text":"` + text + `"}`}
		},
	}, func(r llmtest.Request) string { return "offered: " + strings.Join(r.Tools, ",") }))
	base := approvalEnv(t, tg, llm, "")
	withTelegramWebhook(base)
	const user, alice, bob = 7272, 1001, 1002
	config := `mcp:
  servers:
    - name: kit
      transport: http
      url: "` + srv.URL + `"
      tools: {allow: [echo]}
approvals:
  rules:
    - tools: ["group:mcp:kit"]
      quorum: 2
      approvers: ["telegram:7272", "telegram:1001", "telegram:1002"]
`
	var hooks []string
	for i := range 2 {
		env := maps.Clone(base)
		env["SWITCHBOARD_REPLICA"] = []string{"replica-0", "replica-1"}[i]
		d := startReplica(ctx, t, env, config)
		hooks = append(hooks, "http://"+d.http+"/webhooks/telegram")
	}
	eventually(ctx, t, "the webhook registered", func() bool { return tg.Webhook() != nil })
	tg.DeliverTo(hooks[0])
	ask := func(text, want string) {
		t.Helper()
		after := lastID(tg, user)
		tg.SendText(user, user, "Uma", text)
		newReplyContaining(ctx, t, tg, user, after, want)
	}
	eventually(ctx, t, "the MCP tools to be offered", func() bool {
		after := lastID(tg, user)
		tg.SendText(user, user, "Uma", "what tools?")
		return strings.Contains(newReplyContaining(ctx, t, tg, user, after, "offered:").Visible, "mcp_kit_echo")
	})
	mark := lastID(tg, user)
	ask("echo hello", "I asked the admins")
	mine := newReplyContaining(ctx, t, tg, user, mark, "Tool access request")
	cardA := newReplyContaining(ctx, t, tg, alice, 0, "Tool access request")
	cardB := newReplyContaining(ctx, t, tg, bob, 0, "Tool access request")
	if !strings.Contains(cardB.Visible, "Needs 2 people to approve") || !strings.Contains(cardB.Visible, "0 of 2") {
		t.Fatalf("the request does not say it needs two people: %q", cardB.Visible)
	}
	answers := 0
	press := func(who int64, card telegramtest.Message, hook string) string {
		t.Helper()
		tg.DeliverTo(hook)
		tg.PressButton(who, who, card.ID, buttonOn(t, card, "Approve"))
		answers++
		return lastAnswerText(ctx, t, tg, answers)
	}
	if a := press(user, mine, hooks[0]); a != "You asked for this; another approver must decide." {
		t.Fatalf("the person's own press answered %q", a)
	}
	if a := press(alice, cardA, hooks[0]); a != "Your vote is counted: 1 of 2." {
		t.Fatalf("A's vote answered %q", a)
	}
	edited := waitEdited(ctx, t, tg, bob, cardB.ID)
	if !strings.Contains(edited.Visible, "1 of 2 — ✅ telegram:1001") || len(edited.Buttons) == 0 {
		t.Fatalf("after one vote B's message is %q with buttons %v; want the vote shown and the buttons kept", edited.Visible, edited.Buttons)
	}
	tg.DeliverTo(hooks[0])
	ask("echo hello", "is waiting for an admin")
	told := lastID(tg, user)
	if a := press(bob, edited, hooks[1]); a != "Approved." {
		t.Fatalf("B's vote answered %q", a)
	}
	newReplyContaining(ctx, t, tg, user, told, "2 approvers granted echo of mcp:kit to telegram:7272")
	final := waitEditedAgain(ctx, t, tg, alice, cardA.ID)
	if !strings.Contains(final.Visible, "telegram:1001, telegram:1002") || len(final.Buttons) != 0 {
		t.Errorf("A's message after the decision is %q with buttons %v; want both names and no buttons", final.Visible, final.Buttons)
	}
	if a := press(alice, cardA, hooks[1]); !strings.HasPrefix(a, "Already decided") {
		t.Errorf("a replayed press answered %q", a)
	}
	tg.DeliverTo(hooks[0])
	ask("echo hello", "tool said: echo: hello")
	n := 0
	for _, m := range tg.Messages(user) {
		if strings.Contains(m.Visible, "granted echo of mcp:kit") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the person was told of the grant %d times, want 1", n)
	}
}
