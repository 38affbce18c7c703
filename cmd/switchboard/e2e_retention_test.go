package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

// requestFor returns the newest model request whose last user message
// contains text.
func requestFor(t *testing.T, llm *llmtest.Server, text string) llmtest.Request {
	t.Helper()
	reqs := llm.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		for j := len(reqs[i].Messages) - 1; j >= 0; j-- {
			m := reqs[i].Messages[j]
			if m.Role == "user" {
				if strings.Contains(m.Content, text) {
					return reqs[i]
				}
				break
			}
		}
	}
	t.Fatalf("no model request answers %q", text)
	return llmtest.Request{}
}

// sawText reports whether any message of r contains text.
func sawText(r llmtest.Request, text string) bool {
	for _, m := range r.Messages {
		if strings.Contains(m.Content, text) {
			return true
		}
	}
	return false
}

// TestE2EResetForgetAudit: /reset while a run waits on an approval keeps
// that turn whole (the model gets the call with its result) and hides the
// earlier one from every later request; /forget and /audit refuse a
// non-admin; /audit shows the approval's decision and the reset; an
// admin's /forget confirm deletes the chat's history, so the model sees
// none of it afterwards.
func TestE2EResetForgetAudit(t *testing.T) {
	ctx := testCtx(t, 3*time.Minute)
	tg, llm := fakes(t)
	addr := freeAddr(t)
	env := approvalEnv(t, tg, llm, addr)
	// The document's caption needs no mention (the fake sets no caption
	// entities).
	env["SWITCHBOARD_TELEGRAM_REQUIRE_MENTION"] = "false"
	d := startDaemon(t, t.TempDir(), addr, env)
	d.waitReady(ctx)
	const group, dev = -1007770001, 700
	say := func(user int64, text, want string) telegramtest.Message {
		t.Helper()
		after := lastID(tg, group)
		tg.PushMessage(telegramtest.Incoming{ChatID: group, ChatType: "supergroup", UserID: user, UserName: "U", Text: text})
		return newReplyContaining(ctx, t, tg, group, after, want)
	}
	mention := "@" + telegramtest.BotUsername + " "

	say(dev, mention+"first secret question", "echo: first secret question")

	// A run parks on an approval; /reset meanwhile.
	adminMsgs := len(tg.Messages(admin))
	tg.PushMessage(telegramtest.Incoming{ChatID: group, ChatType: "supergroup", UserID: dev, UserName: "U",
		Text: mention + `please CALL_TOOL:exec {"command":"echo parked"}`})
	msgs, err := waitAnswers(ctx, tg, admin, adminMsgs+1)
	if err != nil {
		t.Fatalf("no approval request: %v", err)
	}
	approval := msgs[adminMsgs]
	say(dev, "/reset", "Fresh start")
	after := lastID(tg, group)
	tg.PressButton(admin, admin, approval.ID, buttonOn(t, approval, "Deny"))
	newReplyContaining(ctx, t, tg, group, after, "tool exec said: the approvers denied this command")
	resumed := llm.Requests()[len(llm.Requests())-1]
	var call, result bool
	for _, m := range resumed.Messages {
		call = call || len(m.ToolCalls) > 0
		result = result || m.Role == "tool"
	}
	if !call || !result || !sawText(resumed, "CALL_TOOL:exec") {
		t.Errorf("the run resumed after /reset without its turn whole (call %v, result %v): %+v", call, result, resumed.Messages)
	}
	if sawText(resumed, "first secret question") {
		t.Errorf("the resumed run still saw the turn before /reset")
	}
	say(dev, mention+"after the reset", "echo: after the reset")
	if r := requestFor(t, llm, "after the reset"); sawText(r, "first secret question") {
		t.Errorf("the model saw a message from before /reset: %+v", r.Messages)
	}

	say(dev, "/forget confirm", "Only admins can make me forget a chat")
	say(dev, "/audit", "Only admins can read the audit log")
	log := say(admin, "/audit 5", "decisions, newest first")
	for _, want := range []string{"approval.decided", "→ denied", "telegram:500", "chat.reset chat:telegram:-1007770001", "telegram:700"} {
		if !strings.Contains(log.Visible, want) {
			t.Errorf("/audit = %q, want %q in it", log.Visible, want)
		}
	}

	tg.AddFile("tg-notes", "notes.txt", []byte("the launch code is 1234\n"))
	after = lastID(tg, group)
	tg.SendMedia(group, dev, "keep my notes", telegramtest.Media{Kind: "document", FileID: "tg-notes", FileName: "notes.txt", MimeType: "text/plain", Size: 24})
	newReplyContaining(ctx, t, tg, group, after, "echo: keep my notes")
	inboxes := filepath.Join(env["SWITCHBOARD_DATA_DIR"], "workspaces", "*telegram_-1007770001-*", "inbox", "notes.txt")
	if m, _ := filepath.Glob(inboxes); len(m) != 1 {
		t.Fatalf("the document is not in the chat's workspace (%s): %v", inboxes, m)
	}

	say(admin, "/forget", "Send /forget confirm to delete it all")
	// The document is the chat's one attachment: its stored bytes go too.
	say(admin, "/forget confirm", "and 1 attachment.")
	if m, _ := filepath.Glob(inboxes); len(m) != 0 {
		t.Errorf("after /forget the document is still in the workspace: %v", m)
	}
	say(admin, "/audit 1", "chat.forgotten")
	say(dev, mention+"after forgetting", "echo: after forgetting")
	r := requestFor(t, llm, "after forgetting")
	for _, gone := range []string{"after the reset", "CALL_TOOL", "first secret question", "launch code"} {
		if sawText(r, gone) {
			t.Errorf("after /forget the model still saw %q: %+v", gone, r.Messages)
		}
	}
}
