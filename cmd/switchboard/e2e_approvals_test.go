package main

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

const admin = 500 // telegram user id of the admin (and their private chat)

// buttonOn returns the callback data of the button labelled label on msg.
func buttonOn(t *testing.T, msg telegramtest.Message, label string) string {
	t.Helper()
	for _, row := range msg.Buttons {
		for _, b := range row {
			if b.Text == label {
				return b.CallbackData
			}
		}
	}
	t.Fatalf("no %q button on message %q", label, msg.Visible)
	return ""
}

// lastAnswerText waits for the n-th callback answer and returns its text.
func lastAnswerText(ctx context.Context, t *testing.T, tg *telegramtest.Server, n int) string {
	t.Helper()
	for {
		if a := tg.CallbackAnswers(); len(a) >= n {
			return a[n-1].Text
		}
		select {
		case <-ctx.Done():
			t.Fatalf("press %d was never answered", n)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// waitEdited waits until the bot message id in chat was edited.
func waitEdited(ctx context.Context, t *testing.T, tg *telegramtest.Server, chat int64, id int) telegramtest.Message {
	t.Helper()
	for {
		for _, m := range tg.Messages(chat) {
			if m.ID == id && m.Edits > 0 {
				return m
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("message %d in chat %d was never edited", id, chat)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func approvalEnv(t *testing.T, tg *telegramtest.Server, llm *llmtest.Server, addr string) map[string]string {
	env := externalEnv(t, tg, llm, addr)
	env["SWITCHBOARD_ADMINS"] = "telegram:500"
	return env
}

func TestE2EAccessRequestApprovedByAdmin(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	tg, llm := fakes(t)
	addr := freeAddr(t)
	env := approvalEnv(t, tg, llm, addr)
	env["SWITCHBOARD_ACCESS_MODE"] = "request"
	d := startDaemon(t, t.TempDir(), addr, env)
	d.waitReady(ctx)

	const stranger = 600
	tg.SendText(stranger, stranger, "Stella", "hello, may I?")
	req, err := waitAnswers(ctx, tg, admin, 1)
	if err != nil {
		t.Fatalf("admin never got the access request: %v", err)
	}
	if !strings.Contains(req[0].Visible, "telegram:600") || !strings.Contains(req[0].Visible, "Stella") {
		t.Fatalf("access request = %q", req[0].Visible)
	}
	told, err := waitAnswers(ctx, tg, stranger, 1)
	if err != nil || !strings.Contains(told[0].Visible, "asked an admin") {
		t.Fatalf("stranger told %v %v", told, err)
	}
	approve := buttonOn(t, req[0], "Approve")

	// The stranger forges a press on the admin's button: nothing happens.
	tg.PressButton(admin, stranger, req[0].ID, approve)
	if a := lastAnswerText(ctx, t, tg, 1); a != "You may not decide this." {
		t.Fatalf("forged press answered %q", a)
	}
	tg.PressButton(admin, admin, req[0].ID, approve)
	if a := lastAnswerText(ctx, t, tg, 2); a != "Approved." {
		t.Fatalf("admin press answered %q", a)
	}
	msgs, err := waitAnswers(ctx, tg, stranger, 2)
	if err != nil || !strings.Contains(msgs[1].Visible, "let you in") {
		t.Fatalf("approved user told %v %v", msgs, err)
	}
	if m := waitEdited(ctx, t, tg, admin, req[0].ID); len(m.Buttons) != 0 || !strings.Contains(m.Visible, "Approved") {
		t.Fatalf("access request after decision = %+v", m)
	}
	tg.SendText(stranger, stranger, "Stella", "thanks!")
	msgs, err = waitAnswers(ctx, tg, stranger, 3)
	if err != nil || !strings.Contains(msgs[2].Visible, "echo: thanks!") {
		t.Fatalf("approved user not served: %v %v", msgs, err)
	}
}

// newReplyContaining waits for a bot message in chat, newer than the
// message id after, containing s, and returns it. Older messages never
// match, so a check cannot pass on an earlier reply.
func newReplyContaining(ctx context.Context, t *testing.T, tg *telegramtest.Server, chat int64, after int, s string) telegramtest.Message {
	t.Helper()
	for {
		for _, m := range tg.Messages(chat) {
			if m.ID > after && strings.Contains(m.Visible, s) {
				return m
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("chat %d never got a new message (after id %d) containing %q; has %+v", chat, after, s, tg.Messages(chat))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// lastID is the id of the newest bot message in chat (0 when none).
func lastID(tg *telegramtest.Server, chat int64) int {
	id := 0
	for _, m := range tg.Messages(chat) {
		id = max(id, m.ID)
	}
	for _, m := range tg.Deleted(chat) {
		id = max(id, m.ID)
	}
	return id
}

func TestE2EExecApprovalFlow(t *testing.T) {
	ctx := testCtx(t, 3*time.Minute)
	tg, llm := fakes(t)
	addr := freeAddr(t)
	env := approvalEnv(t, tg, llm, addr)
	d := startDaemon(t, t.TempDir(), addr, env)
	d.waitReady(ctx)
	const dev = 700
	adminMsgs := 0
	answers := 0

	// ask sends a command for the agent to run and returns the approval
	// message the admin got.
	ask := func(cmd string) telegramtest.Message {
		t.Helper()
		tg.SendText(dev, dev, "Dev", `please CALL_TOOL:exec {"command":"`+cmd+`"}`)
		adminMsgs++
		msgs, err := waitAnswers(ctx, tg, admin, adminMsgs)
		if err != nil {
			t.Fatalf("no approval request for %q: %v", cmd, err)
		}
		m := msgs[adminMsgs-1]
		if !strings.Contains(m.Visible, cmd) {
			t.Fatalf("approval request does not show the exact command %q: %q", cmd, m.Visible)
		}
		return m
	}
	press := func(m telegramtest.Message, by int64, label string) string {
		t.Helper()
		tg.PressButton(admin, by, m.ID, buttonOn(t, m, label))
		answers++
		return lastAnswerText(ctx, t, tg, answers)
	}
	// Each step waits for the agent's new reply before the next message,
	// so no check can be satisfied by an earlier step's reply.
	reply := func(after int, s string) {
		t.Helper()
		newReplyContaining(ctx, t, tg, dev, after, s)
	}

	// Allow once, after a forged press that changes nothing.
	mark := lastID(tg, dev)
	m := ask("echo approved-output")
	if a := press(m, dev, "Allow once"); a != "You may not decide this." {
		t.Fatalf("forged press answered %q", a)
	}
	if a := press(m, admin, "Allow once"); !strings.HasPrefix(a, "Done") {
		t.Fatalf("approver press answered %q", a)
	}
	reply(mark, "tool exec said: approved-output")
	if e := waitEdited(ctx, t, tg, admin, m.ID); len(e.Buttons) != 0 || !strings.Contains(e.Visible, "Allowed once by telegram:500") {
		t.Fatalf("approval message after decision = %q (buttons %v)", e.Visible, e.Buttons)
	}

	// Deny: the command does not run.
	mark = lastID(tg, dev)
	m = ask("echo must-not-run > denied.txt")
	press(m, admin, "Deny")
	reply(mark, "tool exec said: the approvers denied this command")

	// Always allow stores the whole command: the same one runs again
	// without asking, a longer one asks again.
	mark = lastID(tg, dev)
	m = ask("echo a")
	press(m, admin, "Always allow")
	reply(mark, "tool exec said: a")
	mark = lastID(tg, dev)
	tg.SendText(dev, dev, "Dev", `again CALL_TOOL:exec {"command":"echo a"}`)
	for !slices.ContainsFunc(tg.Messages(dev), func(m telegramtest.Message) bool {
		return m.ID > mark && strings.Contains(m.Visible, "tool exec said: a")
	}) {
		if n := len(tg.Messages(admin)); n != adminMsgs {
			t.Fatalf("an always-allowed command asked again (%d admin messages, want %d)", n, adminMsgs)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the always-allowed command never ran again; dev chat: %+v", tg.Messages(dev))
		case <-time.After(20 * time.Millisecond):
		}
	}
	if n := len(tg.Messages(admin)); n != adminMsgs {
		t.Fatalf("an always-allowed command asked again (%d admin messages, want %d)", n, adminMsgs)
	}
	mark = lastID(tg, dev)
	m = ask("echo a; id")
	press(m, admin, "Deny")
	reply(mark, "tool exec said: the approvers denied this command")

	// A command caught by the deny patterns never reaches an approver.
	mark = lastID(tg, dev)
	tg.SendText(dev, dev, "Dev", `CALL_TOOL:exec {"command":"rm -rf /"}`)
	reply(mark, "blocked by safety policy")
	if n := len(tg.Messages(admin)); n != adminMsgs {
		t.Fatalf("a blocked command reached the approvers")
	}
	// The denied command never ran: its file exists in no workspace.
	matches, _ := filepath.Glob(filepath.Join(env["SWITCHBOARD_DATA_DIR"], "workspaces", "*", "denied.txt"))
	if len(matches) != 0 {
		t.Fatalf("the denied command ran: %v", matches)
	}
	if ws, _ := filepath.Glob(filepath.Join(env["SWITCHBOARD_DATA_DIR"], "workspaces", "*")); len(ws) == 0 {
		t.Fatal("no workspace was created, so the check above proves nothing")
	}
}

// TestE2EPendingApprovalSurvivesKill9: the daemon is killed while an
// approval is pending; after a restart the button still works and the
// agent's reply arrives.
func TestE2EPendingApprovalSurvivesKill9(t *testing.T) {
	ctx := testCtx(t, 3*time.Minute)
	tg, llm := fakes(t)
	addr := freeAddr(t)
	env := approvalEnv(t, tg, llm, addr)
	dir := t.TempDir()
	d := startDaemon(t, dir, addr, env)
	d.waitReady(ctx)

	const dev = 800
	tg.SendText(dev, dev, "Dev", `CALL_TOOL:exec {"command":"echo survived-restart"}`)
	req, err := waitAnswers(ctx, tg, admin, 1)
	if err != nil {
		t.Fatalf("no approval request: %v", err)
	}
	// A message whose send was in flight at a kill may be sent again
	// (delivery is at-least-once): kill only once its send is recorded, so
	// a second request could only come from the restart asking again.
	waitOutboxSent(ctx, t, env["SWITCHBOARD_DATABASE_URL"], strconv.Itoa(admin))
	d.kill9()
	d = startDaemon(t, dir, addr, env)
	d.waitReady(ctx)

	tg.PressButton(admin, admin, req[0].ID, buttonOn(t, req[0], "Allow once"))
	if a := lastAnswerText(ctx, t, tg, 1); !strings.HasPrefix(a, "Done") {
		t.Fatalf("press after restart answered %q", a)
	}
	for {
		for _, m := range tg.Messages(dev) {
			if strings.Contains(m.Visible, "tool exec said: survived-restart") {
				if n := len(tg.Messages(admin)); n != 1 {
					t.Fatalf("the restart posted the approval again (%d admin messages)", n)
				}
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("reply never delivered after restart; dev chat: %+v", tg.Messages(dev))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitOutboxSent waits until every outbox row to chat is recorded as sent.
func waitOutboxSent(ctx context.Context, t *testing.T, dbURL, chat string) {
	t.Helper()
	db, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.WithoutCancel(ctx))
	for {
		var unsent, all int
		err := db.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status <> 'sent'), count(*) FROM outbox WHERE chat_id = $1`, chat).Scan(&unsent, &all)
		if err == nil && all > 0 && unsent == 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the outbox rows to chat %s were never all recorded as sent (%d of %d unsent, err %v)", chat, unsent, all, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
