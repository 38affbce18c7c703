package main

import (
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
)

// toolResults returns the tool messages of a model request.
func toolResults(req llmtest.Request) []string {
	var out []string
	for _, m := range req.Messages {
		if m.Role == "tool" {
			out = append(out, m.Content)
		}
	}
	return out
}

// TestE2EParkedApprovalWaitingAnswerAndCancel: while an exec approval is
// pending, a new message in the same chat is answered at once with what is
// waiting; /cancel withdraws the request: the approver's message is
// edited, the model is told the user cancelled, the command never runs,
// and the message that came meanwhile is answered after the decision.
func TestE2EParkedApprovalWaitingAnswerAndCancel(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	e := startTelegramE2E(ctx, t, func(env map[string]string) { env["SWITCHBOARD_ADMINS"] = "telegram:500" })
	tg, llm, env := e.tg, e.llm, e.env

	const dev = 900
	const cmd = "echo parked-never-runs > parked.txt"
	tg.SendText(dev, dev, "Dev", `please CALL_TOOL:exec {"command":"`+cmd+`"}`)
	req, err := waitAnswers(ctx, tg, admin, 1)
	if err != nil {
		t.Fatalf("no approval request: %v", err)
	}
	if !strings.Contains(req[0].Visible, cmd) {
		t.Fatalf("approval request = %q", req[0].Visible)
	}
	note := newReplyContaining(ctx, t, tg, dev, 0, "Waiting for an approver")
	calls := len(llm.Requests())

	// A new message while the request is pending: answered at once with
	// what the chat waits for, without a model call.
	mark := lastID(tg, dev)
	asked := time.Now()
	tg.SendText(dev, dev, "Dev", "are you still there?")
	w := newReplyContaining(ctx, t, tg, dev, mark, "waiting for an admin to approve")
	t.Logf("waiting answer after %d ms", time.Since(asked).Milliseconds())
	for _, s := range []string{cmd, "/cancel", "asked "} {
		if !strings.Contains(w.Visible, s) {
			t.Fatalf("waiting answer lacks %q: %q", s, w.Visible)
		}
	}
	if n := len(llm.Requests()); n != calls {
		t.Fatalf("the model was called %d times for a message to a parked chat", n-calls)
	}

	// /cancel withdraws the request.
	mark = lastID(tg, dev)
	tg.SendText(dev, dev, "Dev", "/cancel")
	if c := newReplyContaining(ctx, t, tg, dev, mark, "Withdrawn"); !strings.Contains(c.Visible, cmd) {
		t.Fatalf("/cancel answered %q", c.Visible)
	}
	if e := waitEdited(ctx, t, tg, admin, req[0].ID); len(e.Buttons) != 0 || !strings.Contains(e.Visible, "Withdrawn by telegram:900") {
		t.Fatalf("approver's message after /cancel = %q (buttons %v)", e.Visible, e.Buttons)
	}
	if e := waitEdited(ctx, t, tg, dev, note.ID); !strings.Contains(e.Visible, "Withdrawn") {
		t.Fatalf("requester's note after /cancel = %q", e.Visible)
	}

	// The run resumes: the model learns the user cancelled and answers
	// the message that came while it was parked.
	answer := newReplyContaining(ctx, t, tg, dev, mark, "echo: are you still there?")
	reqs := llm.Requests()
	told := slices.IndexFunc(reqs, func(r llmtest.Request) bool {
		return slices.ContainsFunc(toolResults(r), func(s string) bool { return strings.Contains(s, "cancelled by the user") })
	})
	if told < 0 {
		t.Fatalf("the model was never told the user cancelled; requests: %+v", reqs)
	}
	if u := userTexts(reqs[told]); !slices.Contains(u, "are you still there?") || slices.Contains(u, "/cancel") {
		t.Fatalf("resumed call saw user messages %q", u)
	}
	t.Logf("answered after the withdrawal: %q", answer.Visible)

	// Nothing ran, nobody was asked again, nothing was answered twice.
	time.Sleep(500 * time.Millisecond)
	if n := len(tg.Messages(admin)); n != 1 {
		t.Fatalf("%d admin messages, want the one request", n)
	}
	// exec runs commands in a workspace under the data dir (see
	// TestE2EExecApprovalFlow): had it run, its file would be there.
	_ = filepath.WalkDir(env["SWITCHBOARD_DATA_DIR"], func(path string, _ fs.DirEntry, err error) error {
		if err == nil && filepath.Base(path) == "parked.txt" {
			t.Fatalf("the withdrawn command ran: %s", path)
		}
		return nil
	})
	n := 0
	for _, m := range tg.Messages(dev) {
		if strings.Contains(m.Visible, "echo: are you still there?") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the message sent while parked was answered %d times: %q", n, answers(tg, dev))
	}
}
