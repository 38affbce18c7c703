package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

// askCall is the message that makes the fake model call ask_user with
// args.
func askCall(args string) string { return "CALL_TOOL:ask_user " + args }

// requestsWithResult counts the model requests that carry a tool result
// containing s.
func requestsWithResult(reqs []llmtest.Request, s string) int {
	n := 0
	for _, r := range reqs {
		if slices.ContainsFunc(toolResults(r), func(c string) bool { return strings.Contains(c, s) }) {
			n++
		}
	}
	return n
}

// messagesContaining counts the bot messages in chat containing s.
func messagesContaining(tg *telegramtest.Server, chat int64, s string) int {
	n := 0
	for _, m := range tg.Messages(chat) {
		if strings.Contains(m.Visible, s) {
			n++
		}
	}
	return n
}

// waitPressAnswer waits for a callback answer beyond the first n and
// returns its text.
func waitPressAnswer(ctx context.Context, t *testing.T, tg *telegramtest.Server, n int) string {
	t.Helper()
	return lastAnswerText(ctx, t, tg, n+1)
}

// TestE2EAskUserAnsweredByPress: in a group, the agent asks the person who
// wrote; a press by someone else is refused and changes nothing, forged
// button data changes nothing, another person's message is told whose
// answer the run waits for, and the asker's press is the tool result: the
// question's message shows the answer without buttons and the chat gets
// the model's next reply.
func TestE2EAskUserAnsweredByPress(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	e := startTelegramE2E(ctx, t, func(env map[string]string) { env["SWITCHBOARD_TELEGRAM_REQUIRE_MENTION"] = "false" })
	tg, llm := e.tg, e.llm
	const group, alice, bob = -3001, 42, 43

	tg.SendTextInChat(group, 0, alice, "Alice", askCall(`{"question":"Which environment?","options":["Staging","Production"]}`))
	q := newReplyContaining(ctx, t, tg, group, 0, "Which environment?")
	if !strings.Contains(q.Visible, "telegram:42") || len(q.Buttons) != 2 {
		t.Fatalf("question message = %q with buttons %+v", q.Visible, q.Buttons)
	}
	staging := buttonOn(t, q, "Staging")
	calls := len(llm.Requests())

	// Bob presses: refused, nothing changes.
	presses := len(tg.CallbackAnswers())
	tg.PressButton(group, bob, q.ID, staging)
	if a := waitPressAnswer(ctx, t, tg, presses); a != "Only telegram:42 can answer this." {
		t.Fatalf("Bob's press answered %q", a)
	}
	// Forged data: an option the question does not have, a made-up id.
	presses++
	tg.PressButton(group, alice, q.ID, staging[:len(staging)-1]+"z")
	if a := waitPressAnswer(ctx, t, tg, presses); a != "This button is no longer active." {
		t.Fatalf("press on a forged option answered %q", a)
	}
	presses++
	tg.PressButton(group, alice, q.ID, "qu:aaaaaaaaaaaaaaaaaaaa:a")
	if a := waitPressAnswer(ctx, t, tg, presses); a != "This question no longer exists." {
		t.Fatalf("press on a forged id answered %q", a)
	}
	// Bob writes meanwhile: a message of the session, told whose answer
	// the run waits for, without a model call.
	mark := lastID(tg, group)
	tg.SendTextInChat(group, 0, bob, "Bob", "is anyone deploying?")
	if w := newReplyContaining(ctx, t, tg, group, mark, "waiting for telegram:42's answer"); !strings.Contains(w.Visible, "Which environment?") {
		t.Fatalf("waiting notice = %q", w.Visible)
	}
	if m, _ := tg.Message(group, q.ID); m.Edits != 0 || len(m.Buttons) != 2 {
		t.Fatalf("the question changed before its answer: %+v", m)
	}
	if n := len(llm.Requests()); n != calls {
		t.Fatalf("the model was called %d times while the question waited", n-calls)
	}

	// Alice presses: the answer is the tool result.
	mark = lastID(tg, group)
	presses++
	tg.PressButton(group, alice, q.ID, staging)
	if a := waitPressAnswer(ctx, t, tg, presses); a != "Answered: Staging" {
		t.Fatalf("Alice's press answered %q", a)
	}
	// The model's next reply answers Bob's message, which came after the
	// step: the request carries the answer as the tool result, then Bob's
	// message.
	newReplyContaining(ctx, t, tg, group, mark, "echo: is anyone deploying?")
	if m := waitEdited(ctx, t, tg, group, q.ID); len(m.Buttons) != 0 || !strings.Contains(m.Visible, "telegram:42 pressed: Staging") {
		t.Fatalf("question after the answer = %q (buttons %v)", m.Visible, m.Buttons)
	}
	reqs := llm.Requests()
	last := reqs[len(reqs)-1]
	if r := toolResults(last); !slices.Contains(r, "telegram:42 pressed: Staging") {
		t.Fatalf("the model's tool results = %q, want the pressed option", r)
	}
	if n := requestsWithResult(reqs, "pressed: Staging"); n != 1 || len(reqs) != calls+1 {
		t.Fatalf("%d model calls after the answer (%d with it), want 1", len(reqs)-calls, n)
	}

	// A second press changes nothing.
	presses++
	tg.PressButton(group, alice, q.ID, buttonOn(t, q, "Production"))
	if a := waitPressAnswer(ctx, t, tg, presses); !strings.HasPrefix(a, "Already settled") {
		t.Fatalf("a second press answered %q", a)
	}
	if n := messagesContaining(tg, group, "echo: is anyone deploying?"); n != 1 {
		t.Fatalf("Bob's message was answered %d times: %q", n, answers(tg, group))
	}
}

// TestE2EAskUserAnsweredByText: the asker's next message is the answer:
// the model gets it as the tool result and not also as a user message.
func TestE2EAskUserAnsweredByText(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	e := startTelegramE2E(ctx, t, nil)
	tg, llm := e.tg, e.llm
	const chat = 42

	tg.SendText(chat, chat, "Alice", askCall(`{"question":"Favourite colour?"}`))
	q := newReplyContaining(ctx, t, tg, chat, 0, "Favourite colour?")
	if len(q.Buttons) != 0 || !strings.Contains(q.Visible, "Reply with your answer") {
		t.Fatalf("question without options = %q (buttons %v)", q.Visible, q.Buttons)
	}
	mark := lastID(tg, chat)
	tg.SendText(chat, chat, "Alice", "deep blue")
	newReplyContaining(ctx, t, tg, chat, mark, "tool ask_user said: telegram:42 answered: deep blue")
	if m := waitEdited(ctx, t, tg, chat, q.ID); !strings.Contains(m.Visible, "telegram:42 answered: deep blue") {
		t.Fatalf("question after the answer = %q", m.Visible)
	}
	reqs := llm.Requests()
	if n := requestsWithResult(reqs, "telegram:42 answered: deep blue"); n != 1 {
		t.Fatalf("%d model requests carry the answer, want 1", n)
	}
	for _, r := range reqs {
		if slices.Contains(userTexts(r), "deep blue") {
			t.Fatalf("the answer reached the model as a user message too: %q", userTexts(r))
		}
	}
	// The next message is a message again.
	mark = lastID(tg, chat)
	tg.SendText(chat, chat, "Alice", "thanks")
	if r := newReplyContaining(ctx, t, tg, chat, mark, "echo: thanks"); !strings.Contains(r.Visible, "history: 2 user messages") {
		t.Fatalf("reply after the answer = %q; want the answer not counted as a user message", r.Visible)
	}
}

// TestE2EAskUserSurvivesRestart: a question asked before a kill -9 is
// answered by its button after the restart, one asked before a clean stop
// by a typed answer; each run resumes once.
func TestE2EAskUserSurvivesRestart(t *testing.T) {
	ctx := testCtx(t, 3*time.Minute)
	e := startTelegramE2E(ctx, t, nil)
	tg, llm := e.tg, e.llm
	const chat = 42

	tg.SendText(chat, chat, "Alice", askCall(`{"question":"Ship it?","options":["Yes","No"]}`))
	q := newReplyContaining(ctx, t, tg, chat, 0, "Ship it?")
	e.d.kill9()
	e.restart(ctx, t)
	mark := lastID(tg, chat)
	presses := len(tg.CallbackAnswers())
	tg.PressButton(chat, chat, q.ID, buttonOn(t, q, "Yes"))
	if a := waitPressAnswer(ctx, t, tg, presses); a != "Answered: Yes" {
		t.Fatalf("press after the restart answered %q", a)
	}
	newReplyContaining(ctx, t, tg, chat, mark, "tool ask_user said: telegram:42 pressed: Yes")

	tg.SendText(chat, chat, "Alice", askCall(`{"question":"Which day?"}`))
	newReplyContaining(ctx, t, tg, chat, mark, "Which day?")
	e.d.stop()
	e.restart(ctx, t)
	mark = lastID(tg, chat)
	tg.SendText(chat, chat, "Alice", "Tuesday")
	newReplyContaining(ctx, t, tg, chat, mark, "tool ask_user said: telegram:42 answered: Tuesday")

	// Give a second resumption (recovery, a repeated wake) time to show.
	mark = lastID(tg, chat)
	tg.SendText(chat, chat, "Alice", "SAY: settled")
	newReplyContaining(ctx, t, tg, chat, mark, "settled")
	reqs := llm.Requests()
	for _, s := range []string{"telegram:42 pressed: Yes", "telegram:42 answered: Tuesday"} {
		if n := requestsWithResult(reqs, s); n < 1 {
			t.Fatalf("the model never got %q", s)
		}
		if n := messagesContaining(tg, chat, "said: "+s); n != 1 {
			t.Fatalf("%q was replied to %d times: %q", s, n, answers(tg, chat))
		}
	}
}

// TestE2EAskUserCancel: /cancel withdraws the sender's waiting question;
// the agent hears it was withdrawn and the question's message says so.
func TestE2EAskUserCancel(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	e := startTelegramE2E(ctx, t, nil)
	tg := e.tg
	const chat = 42

	tg.SendText(chat, chat, "Alice", askCall(`{"question":"Proceed?","options":["Go"]}`))
	q := newReplyContaining(ctx, t, tg, chat, 0, "Proceed?")
	mark := lastID(tg, chat)
	tg.SendText(chat, chat, "Alice", "/cancel")
	newReplyContaining(ctx, t, tg, chat, mark, "Withdrawn the question")
	newReplyContaining(ctx, t, tg, chat, mark, "tool ask_user said: telegram:42 withdrew the question")
	if m := waitEdited(ctx, t, tg, chat, q.ID); len(m.Buttons) != 0 || !strings.Contains(m.Visible, "Withdrawn by telegram:42") {
		t.Fatalf("question after /cancel = %q (buttons %v)", m.Visible, m.Buttons)
	}
}
