package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/slack/slacktest"
)

const (
	slackBot = "xoxb-1111111111-2222222222-e2eSlackBotTokenValue"
	slackApp = "xapp-1-A00000001-3333333333-e2eSlackAppTokenValue"
)

// eventually polls cond until it holds or ctx ends, then fails with what.
func eventually(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func startSlackDaemon(t *testing.T, ctx context.Context, extra map[string]string) (*slacktest.Server, *daemonProc) {
	llm := llmtest.NewServer()
	t.Cleanup(llm.Close)
	return startSlackDaemonWith(t, ctx, llm, extra)
}

// startSlackDaemonWith is startSlackDaemon with the model llm.
func startSlackDaemonWith(t *testing.T, ctx context.Context, llm *llmtest.Server, extra map[string]string) (*slacktest.Server, *daemonProc) {
	sl := slacktest.NewServer(slackBot, slackApp)
	t.Cleanup(sl.Close)
	addr := freeAddr(t)
	env := externalEnv(t, nil, llm, addr)
	withSlack(env, sl)
	for k, v := range extra {
		env[k] = v
	}
	d := startDaemon(t, t.TempDir(), addr, env)
	d.waitReady(ctx)
	if err := sl.WaitConnections(ctx, 1); err != nil {
		t.Fatalf("no Socket Mode connection: %v", err)
	}
	return sl, d
}

// posted returns the chat.postMessage calls in channel.
func posted(sl *slacktest.Server, channel string) []slacktest.Message {
	return sl.Posted(channel, "chat.postMessage")
}

func slackButton(t *testing.T, m slacktest.Message, label string) string {
	t.Helper()
	for _, row := range m.Buttons {
		for _, b := range row {
			if b.Label == label {
				return b.Value
			}
		}
	}
	t.Fatalf("no %q button on %q", label, m.Section)
	return ""
}

func TestE2ESlackReplyInThreadAndSplit(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	sl, _ := startSlackDaemon(t, ctx, nil)
	const channel = "C0000TEAM"
	ts := slacktest.NewTS()
	if _, err := sl.SendEvent("Ev1", slacktest.Msg{Channel: channel, User: "U0000ANN", TS: ts,
		Text: "<@" + slacktest.BotUserID + "> hello slack"}.Mention()); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "a reply in the thread", func() bool { return len(posted(sl, channel)) >= 1 })
	r := posted(sl, channel)[0]
	if r.ThreadTS != ts || !strings.Contains(r.Section+r.Text, "echo: hello slack") {
		t.Fatalf("reply = %+v, want it in thread %s", r, ts)
	}

	long := "SAY: " + strings.Repeat("word ", 900) + "\n\n```go\n" + strings.Repeat("fmt.Println(\"x\")\n", 200) + "```"
	ts2 := slacktest.NewTS()
	if _, err := sl.SendEvent("Ev2", slacktest.Msg{Channel: channel, User: "U0000ANN", TS: ts2,
		Text: "<@" + slacktest.BotUserID + "> " + long}.Mention()); err != nil {
		t.Fatal(err)
	}
	var parts []slacktest.Message
	eventually(ctx, t, "a long reply in several parts", func() bool {
		parts = parts[:0]
		for _, m := range posted(sl, channel) {
			if m.ThreadTS == ts2 {
				parts = append(parts, m)
			}
		}
		return len(parts) >= 3
	})
	for _, p := range parts {
		if len(p.Section) > 3000 || strings.Count(p.Section, "```")%2 != 0 {
			t.Fatalf("part breaks the limit or a code block (%d chars, %d fences)", len(p.Section), strings.Count(p.Section, "```"))
		}
	}
}

func TestE2ESlackAccessRequestAndExecApproval(t *testing.T) {
	ctx := testCtx(t, 3*time.Minute)
	sl, _ := startSlackDaemon(t, ctx, map[string]string{
		"SWITCHBOARD_ACCESS_MODE": "request",
		"SWITCHBOARD_ADMINS":      "slack:U0000BOSS",
	})
	adminIM := slacktest.IM("U0000BOSS")
	const dm = "D0000NEW"
	if _, err := sl.SendEvent("Ev10", slacktest.Msg{Channel: dm, User: "U0000NEW", Text: "hi, may I?"}.Event()); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "the access request to the admin", func() bool { return len(posted(sl, adminIM)) >= 1 })
	req := posted(sl, adminIM)[0]
	if !strings.Contains(req.Section+req.Text, "slack:U0000NEW") {
		t.Fatalf("access request = %+v", req)
	}
	approve := slackButton(t, req, "Approve")
	// The stranger presses the admin's button: refused, nothing changes.
	if _, err := sl.SendInteraction(slacktest.Press{Channel: adminIM, User: "U0000NEW", MessageTS: req.TS, Value: approve, ActionID: "a1"}.BlockActions()); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "the refusal shown to the stranger", func() bool {
		for _, m := range sl.Posted(adminIM, "chat.postEphemeral") {
			if m.User == "U0000NEW" && strings.Contains(m.Text, "may not decide") {
				return true
			}
		}
		return false
	})
	if _, err := sl.SendInteraction(slacktest.Press{Channel: adminIM, User: "U0000BOSS", MessageTS: req.TS, Value: approve, ActionID: "a1"}.BlockActions()); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "the user told they are in", func() bool {
		for _, m := range posted(sl, dm) {
			if strings.Contains(m.Section+m.Text, "let you in") {
				return true
			}
		}
		return false
	})
	eventually(ctx, t, "the request edited without buttons", func() bool {
		for _, m := range sl.Posted(adminIM, "chat.update") {
			if m.TS == req.TS && len(m.Buttons) == 0 && strings.Contains(m.Section+m.Text, "Approved") {
				return true
			}
		}
		return false
	})

	// Now an exec approval by button, decided by the admin.
	if _, err := sl.SendEvent("Ev11", slacktest.Msg{Channel: dm, User: "U0000NEW",
		Text: `CALL_TOOL:exec {"command":"echo from-slack"}`}.Event()); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "the approval request", func() bool { return len(posted(sl, adminIM)) >= 2 })
	ap := posted(sl, adminIM)[1]
	if !strings.Contains(ap.Section+ap.Text, "echo from-slack") {
		t.Fatalf("approval request = %+v", ap)
	}
	if _, err := sl.SendInteraction(slacktest.Press{Channel: adminIM, User: "U0000BOSS", MessageTS: ap.TS,
		Value: slackButton(t, ap, "Allow once"), ActionID: "a2"}.BlockActions()); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "the command's output in the DM", func() bool {
		for _, m := range posted(sl, dm) {
			if strings.Contains(m.Section+m.Text, "tool exec said: from-slack") {
				return true
			}
		}
		return false
	})
}
