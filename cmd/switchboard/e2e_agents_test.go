package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/discord/discordtest"
	"github.com/switchboard-chat/switchboard/channels/slack/slacktest"
)

// TestE2ENamedAgentsAndPolicy: two agents bound to two chats answer with
// their own model; the ops agent's policy denies exec, so it is not
// offered and a call the model makes anyway is refused without running or
// reaching the approvers; /agents lists both.
func TestE2ENamedAgentsAndPolicy(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	tg, llm := fakes(t)
	dir := t.TempDir()
	canary := filepath.Join(dir, "canary")
	cfg := `agents:
  - name: ops
    description: on-call helper
    model: ops-model
    tools: {deny: [exec]}
bindings:
  - chat: "telegram:71"
    agent: ops
`
	writeConfig(t, dir, cfg)
	llm.Handle(func(r llmtest.Request) llmtest.Reply {
		last := r.Messages[len(r.Messages)-1]
		switch {
		case r.Model == "ops-model" && last.Role == "user":
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "exec", Arguments: `{"command":"touch ` + canary + `"}`}}}
		case r.Model == "ops-model":
			return llmtest.Reply{Text: "ops says: " + last.Content}
		}
		return llmtest.Echo(r)
	})
	addr := freeAddr(t)
	env := approvalEnv(t, tg, llm, addr)
	d := startDaemon(t, dir, addr, env)
	d.waitReady(ctx)

	tg.SendText(71, 71, "Olga", "restart the thing")
	ops := newReplyContaining(ctx, t, tg, 71, 0, "ops says:")
	if !strings.Contains(ops.Visible, `tool "exec" is not available to you`) {
		t.Errorf("ops agent's exec call was not refused: %q", ops.Visible)
	}
	tg.SendText(72, 72, "Dan", "hello")
	newReplyContaining(ctx, t, tg, 72, 0, "echo: hello")

	var opsReqs, defReqs int
	for _, r := range llm.Requests() {
		switch r.Model {
		case "ops-model":
			opsReqs++
			if slices.Contains(r.Tools, "exec") {
				t.Errorf("exec was offered to the ops agent: %v", r.Tools)
			}
		default:
			defReqs++
			if !slices.Contains(r.Tools, "exec") {
				t.Errorf("the default agent lost exec: %v", r.Tools)
			}
		}
	}
	if opsReqs != 2 || defReqs != 1 {
		t.Errorf("requests: %d to ops-model, %d to the default model; want 2 and 1", opsReqs, defReqs)
	}
	if _, err := os.Stat(canary); err == nil {
		t.Fatal("the denied exec call ran")
	}
	if msgs := tg.Messages(admin); len(msgs) != 0 {
		t.Errorf("the denied call reached the approvers: %+v", msgs)
	}

	after := lastID(tg, 72)
	tg.SendText(72, 72, "Dan", "/agents")
	list := newReplyContaining(ctx, t, tg, 72, after, "Agents:").Visible
	if !strings.Contains(list, "ops — on-call helper (model ops-model)") || !strings.Contains(list, "← answers in this chat") {
		t.Errorf("/agents = %q", list)
	}
}

// TestE2EAgentConfigMistakesAreConfigErrors: an unknown agent in bindings
// or jobs and an unknown tool in a policy stop serve and doctor with exit 2,
// all reported at once, with "did you mean".
func TestE2EAgentConfigMistakesAreConfigErrors(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	dir := t.TempDir()
	cfg := `agents:
  - name: ops
    tools: {deny: [exce]}
bindings:
  - chat: "telegram:71"
    agent: opps
teams:
  - name: incident
    lead: ops
    members: [writter]
tools:
  profile: coder
  approvals: {mutatng: ask}
`
	writeConfig(t, dir, cfg)
	for _, command := range []string{"serve", "doctor"} {
		d := startDaemon(t, dir, "", nil, command)
		code, err := d.wait(ctx)
		if err != nil || code != 2 {
			t.Fatalf("%s exit %d (%v), want 2:\n%s", command, code, err, d.out.String())
		}
		out := d.out.String()
		for _, want := range []string{`bindings[0].agent names unknown agent "opps"`, `(did you mean "ops"?)`,
			`agents[ops].tools.deny: unknown tool "exce"; did you mean "exec"?`, `tools.profile: unknown profile "coder"`,
			`tools.approvals.mutatng: unknown side-effect class`, `teams[0].members names unknown agent "writter"`} {
			if !strings.Contains(out, want) {
				t.Errorf("%s output lacks %q:\n%s", command, want, out)
			}
		}
	}
}

// TestE2EAskClassToolGetsButtons: write_file is "mutating", which asks by
// default: the approvers get buttons showing the tool and its arguments;
// once allowed the file is written, and read_file (read_only: allowed)
// reads it back without asking.
func TestE2EAskClassToolGetsButtons(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	tg, llm := fakes(t)
	llm.Handle(func(r llmtest.Request) llmtest.Reply {
		last := r.Messages[len(r.Messages)-1]
		switch {
		case last.Role == "user":
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "write_file", Arguments: `{"path":"notes/hello.txt","content":"hi there"}`}}}
		case strings.HasPrefix(last.Content, "wrote "):
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "read_file", Arguments: `{"path":"notes/hello.txt"}`}}}
		}
		return llmtest.Reply{Text: "file says: " + last.Content}
	})
	addr := freeAddr(t)
	d := startDaemon(t, t.TempDir(), addr, approvalEnv(t, tg, llm, addr))
	d.waitReady(ctx)

	tg.SendText(81, 81, "Flo", "make a file")
	asks, err := waitAnswers(ctx, tg, admin, 1)
	if err != nil {
		t.Fatalf("the approvers were not asked: %v", err)
	}
	ask := asks[0]
	for _, want := range []string{"wants to run write_file", `write_file {"path":"notes/hello.txt","content":"hi there"}`, "telegram:81"} {
		if !strings.Contains(ask.Visible, want) {
			t.Errorf("approval message lacks %q:\n%s", want, ask.Visible)
		}
	}
	tg.PressButton(admin, admin, ask.ID, buttonOn(t, ask, "Allow once"))
	reply := newReplyContaining(ctx, t, tg, 81, 0, "file says:")
	if !strings.Contains(reply.Visible, "file says: hi there") {
		t.Errorf("reply = %q", reply.Visible)
	}
	if n := len(tg.Messages(admin)); n != 1 {
		t.Errorf("the approvers got %d messages; read_file (read_only) must not ask", n)
	}
}

// systemOf returns the system prompt of a model request.
func systemOf(r llmtest.Request) string {
	for _, m := range r.Messages {
		if m.Role == "system" {
			return m.Content
		}
	}
	return ""
}

// TestE2EContextFilesAndMemory: a context file the agent writes is in the
// next run's system prompt; a memory written in a chat is found by
// memory_search in that chat after a restart.
func TestE2EContextFilesAndMemory(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	tg, llm := fakes(t)
	llm.Handle(func(r llmtest.Request) llmtest.Reply {
		last := r.Messages[len(r.Messages)-1]
		switch {
		case last.Role == "user" && last.Content == "remember this":
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{
				{Name: "write_file", Arguments: `{"path":"SOUL.md","content":"You speak like a pirate."}`},
				{Name: "write_file", Arguments: `{"path":"memory/project.md","content":"The project codename is Bluebird; it ships in March."}`},
			}}
		case last.Role == "user" && last.Content == "what is the codename?":
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "memory_search", Arguments: `{"query":"codename"}`}}}
		case last.Role == "tool":
			return llmtest.Reply{Text: "tool said: " + last.Content}
		}
		return llmtest.Echo(r)
	})
	dir := t.TempDir()
	cfg := "tools:\n  approvals: {mutating: allow}\n"
	writeConfig(t, dir, cfg)
	addr := freeAddr(t)
	env := externalEnv(t, tg, llm, addr)
	d := startDaemon(t, dir, addr, env)
	d.waitReady(ctx)

	tg.SendText(91, 91, "Pat", "remember this")
	newReplyContaining(ctx, t, tg, 91, 0, "tool said:")
	after := lastID(tg, 91)
	tg.SendText(91, 91, "Pat", "hello again")
	newReplyContaining(ctx, t, tg, 91, after, "echo: hello again")
	reqs := llm.Requests()
	if sys := systemOf(reqs[len(reqs)-1]); !strings.Contains(sys, "## SOUL.md\nYou speak like a pirate.") {
		t.Errorf("the next run's system prompt lacks the written SOUL.md:\n%s", sys)
	}
	if sys := systemOf(reqs[0]); strings.Contains(sys, "pirate") {
		t.Errorf("the first run already had SOUL.md:\n%s", sys)
	}

	d.stop()
	d = startDaemon(t, dir, addr, env)
	d.waitReady(ctx)
	after = lastID(tg, 91)
	tg.SendText(91, 91, "Pat", "what is the codename?")
	reply := newReplyContaining(ctx, t, tg, 91, after, "tool said:")
	if !strings.Contains(reply.Visible, "memory/project.md") || !strings.Contains(reply.Visible, "Bluebird") {
		t.Errorf("memory_search after a restart = %q", reply.Visible)
	}
	// Another chat does not see that chat's memory.
	tg.SendText(92, 92, "Quinn", "what is the codename?")
	other := newReplyContaining(ctx, t, tg, 92, 0, "tool said:")
	if strings.Contains(other.Visible, "Bluebird") {
		t.Errorf("memory leaked to another chat: %q", other.Visible)
	}
}

// TestE2EMessagingAndSessionsTools: the agent posts to another chat it has
// talked in (not to one it has not), creates a forum topic in a Telegram
// forum group, and lists and reads its sessions.
func TestE2EMessagingAndSessionsTools(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	tg, llm := fakes(t)
	const group = -1005550001
	llm.Handle(func(r llmtest.Request) llmtest.Reply {
		last := r.Messages[len(r.Messages)-1]
		switch {
		case last.Role == "user" && last.Content == "tell the group":
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{
				{Name: "message", Arguments: `{"to":"telegram:-1005550001","text":"deploy finished"}`},
				{Name: "message", Arguments: `{"to":"telegram:424242","text":"spam"}`},
				{Name: "create_forum_topic", Arguments: `{"name":"Incident 42","chat":"telegram:-1005550001"}`},
				{Name: "sessions_list", Arguments: `{}`},
				{Name: "sessions_send", Arguments: `{"session":"default/telegram:-1005550001","text":"post the status"}`},
			}}
		case last.Role == "tool":
			var all []string
			for _, m := range r.Messages {
				if m.Role == "tool" {
					all = append(all, m.Content)
				}
			}
			return llmtest.Reply{Text: "tools said: " + strings.Join(all, " | ")}
		}
		return llmtest.Echo(r)
	})
	dir := t.TempDir()
	writeConfig(t, dir, "tools:\n  approvals: {mutating: allow}\n")
	addr := freeAddr(t)
	env := externalEnv(t, tg, llm, addr)
	env["SWITCHBOARD_ADMINS"] = "telegram:77"
	d := startDaemon(t, dir, addr, env)
	d.waitReady(ctx)

	tg.SendText(group, 77, "Ada", "@switchboard_test_bot hello group") // the agent now serves the group
	newReplyContaining(ctx, t, tg, group, 0, "echo: hello group")
	after := lastID(tg, group)
	tg.SendText(77, 77, "Ada", "tell the group")
	reply := newReplyContaining(ctx, t, tg, 77, 0, "tools said:").Visible
	newReplyContaining(ctx, t, tg, group, after, "deploy finished")
	for _, want := range []string{"queued for telegram:-1005550001", "telegram:424242: that chat is not one this agent may post to",
		`created topic "Incident 42": telegram:-1005550001:`, "default/telegram:-1005550001", "default/telegram:77"} {
		if !strings.Contains(reply, want) {
			t.Errorf("tool results lack %q:\n%s", want, reply)
		}
	}
	// sessions_send: the group's session gets the message and its agent
	// answers it there.
	newReplyContaining(ctx, t, tg, group, after, "echo: [Message from default in telegram:77] post the status")
	if !strings.Contains(reply, "posted to default/telegram:-1005550001") {
		t.Errorf("sessions_send result missing:\n%s", reply)
	}
	if msgs := tg.Messages(424242); len(msgs) != 0 {
		t.Errorf("a message reached a chat the agent never served: %+v", msgs)
	}
	if topics := tg.Topics(); len(topics) != 1 || topics[0].Name != "Incident 42" || topics[0].ChatID != group {
		t.Errorf("topics = %+v", topics)
	}
}

// TestE2ENamedAgentsOnSlackAndDiscord: bindings choose the agent on Slack
// and Discord too, each answering with its own model.
func TestE2ENamedAgentsOnSlackAndDiscord(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	sl := slacktest.NewServer(slackBot, slackApp)
	defer sl.Close()
	dc := discordtest.NewServer()
	defer dc.Close()
	llm := llmtest.NewServer()
	defer llm.Close()
	llm.Handle(func(r llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "model " + r.Model + " answers"}
	})
	dir := t.TempDir()
	cfg := `agents:
  - name: ops
    model: ops-model
bindings:
  - chat: "slack:C0000OPS"
    agent: ops
  - chat: "discord:800000000000000077"
    agent: ops
`
	writeConfig(t, dir, cfg)
	addr := freeAddr(t)
	env := externalEnv(t, nil, llm, addr)
	withSlack(env, sl)
	withDiscord(env, dc)
	d := startDaemon(t, dir, addr, env)
	d.waitReady(ctx)
	if err := sl.WaitConnections(ctx, 1); err != nil {
		t.Fatalf("no Socket Mode connection: %v", err)
	}
	for i, ch := range []string{"C0000OPS", "C0000ALL"} {
		msg := slacktest.Msg{Channel: ch, User: "U0000ANN", TS: slacktest.NewTS(), Text: "<@" + slacktest.BotUserID + "> hi"}
		if _, err := sl.SendEvent(fmt.Sprintf("EvA%d", i), msg.Mention()); err != nil {
			t.Fatal(err)
		}
	}
	for _, ch := range []string{"800000000000000077", "800000000000000078"} {
		dc.SendMessage(ch, "900000000000000001", "700000000000000009", "dora", "<@"+discordtest.BotID+"> hi")
	}
	want := map[string]string{"slack C0000OPS": "ops-model", "slack C0000ALL": "test-model",
		"discord 800000000000000077": "ops-model", "discord 800000000000000078": "test-model"}
	for where, model := range want {
		platform, ch, _ := strings.Cut(where, " ")
		eventually(ctx, t, where+" answered by "+model, func() bool {
			if platform == "slack" {
				for _, m := range posted(sl, ch) {
					if strings.Contains(m.Section+m.Text, "model "+model+" answers") {
						return true
					}
				}
				return false
			}
			for _, m := range dc.Messages(ch) {
				if strings.Contains(m.Content, "model "+model+" answers") {
					return true
				}
			}
			return false
		})
	}
}

// TestE2EToolPolicyOnSlackAndDiscord: on Slack and Discord too, an
// ask-class tool (write_file) waits for the admin's button, and a tool the
// policy denies (exec) is refused without running or asking.
func TestE2EToolPolicyOnSlackAndDiscord(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	sl := slacktest.NewServer(slackBot, slackApp)
	defer sl.Close()
	dc := discordtest.NewServer()
	defer dc.Close()
	llm := llmtest.NewServer()
	defer llm.Close()
	dir := t.TempDir()
	writeConfig(t, dir, "tools:\n  deny: [exec]\n")
	const boss = "700000000000000001"
	addr := freeAddr(t)
	env := externalEnv(t, nil, llm, addr)
	withSlack(env, sl)
	withDiscord(env, dc)
	env["SWITCHBOARD_ADMINS"] = "slack:U0000BOSS,discord:" + boss
	env["SWITCHBOARD_APPROVALS_CHAT"] = "slack:C0000ADM"
	d := startDaemon(t, dir, addr, env)
	d.waitReady(ctx)
	if err := sl.WaitConnections(ctx, 1); err != nil {
		t.Fatalf("no Socket Mode connection: %v", err)
	}
	dc.AddUser(boss, "boss")

	// Slack: write_file asks in the approvals chat; the admin allows it.
	const ch = "C0000WRK"
	if _, err := sl.SendEvent("EvP1", slacktest.Msg{Channel: ch, User: "U0000ANN", TS: slacktest.NewTS(),
		Text: "<@" + slacktest.BotUserID + `> CALL_TOOL:write_file {"path":"a.txt","content":"from slack"}`}.Mention()); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "the approval request in Slack", func() bool { return len(posted(sl, "C0000ADM")) >= 1 })
	ap := posted(sl, "C0000ADM")[0]
	if !strings.Contains(ap.Section+ap.Text, `write_file {"path":"a.txt","content":"from slack"}`) {
		t.Fatalf("approval request = %+v", ap)
	}
	if _, err := sl.SendInteraction(slacktest.Press{Channel: "C0000ADM", User: "U0000BOSS", MessageTS: ap.TS,
		Value: slackButton(t, ap, "Allow once"), ActionID: "p1"}.BlockActions()); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "the write's result in Slack", func() bool {
		for _, m := range posted(sl, ch) {
			if strings.Contains(m.Section+m.Text, "tool write_file said: wrote 10 bytes to a.txt") {
				return true
			}
		}
		return false
	})
	// Slack and Discord: exec is denied by policy.
	if _, err := sl.SendEvent("EvP2", slacktest.Msg{Channel: ch, User: "U0000ANN", TS: slacktest.NewTS(),
		Text: "<@" + slacktest.BotUserID + `> CALL_TOOL:exec {"command":"echo hi"}`}.Mention()); err != nil {
		t.Fatal(err)
	}
	dc.SendMessage("800000000000000001", "900000000000000001", "700000000000000002", "dora",
		"<@"+discordtest.BotID+`> CALL_TOOL:exec {"command":"echo hi"}`)
	eventually(ctx, t, "exec refused in Slack", func() bool {
		for _, m := range posted(sl, ch) {
			if strings.Contains(m.Section+m.Text, `tool exec said: tool "exec" is not available to you`) {
				return true
			}
		}
		return false
	})
	eventually(ctx, t, "exec refused in Discord", func() bool {
		for _, m := range dc.Messages("800000000000000001") {
			if strings.Contains(m.Content, `tool exec said: tool "exec" is not available to you`) {
				return true
			}
		}
		return false
	})
	// Discord: write_file asks too (the approvals chat is on Slack).
	dc.SendMessage("800000000000000001", "900000000000000001", "700000000000000002", "dora",
		"<@"+discordtest.BotID+`> CALL_TOOL:write_file {"path":"b.txt","content":"from discord"}`)
	eventually(ctx, t, "the Discord approval request", func() bool { return len(posted(sl, "C0000ADM")) >= 2 })
	if n := len(posted(sl, "C0000ADM")); n != 2 {
		t.Errorf("%d approval requests; the denied exec calls must not ask", n)
	}
}
