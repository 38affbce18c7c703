package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

// asked reports whether any model request so far carried text in one of
// its messages.
func asked(llm *llmtest.Server, text string) bool {
	return slices.ContainsFunc(llm.Requests(), func(r llmtest.Request) bool {
		return slices.ContainsFunc(r.Messages, func(m llmtest.Message) bool { return strings.Contains(m.Content, text) })
	})
}

// TestE2ETelegramRequireMention: in a group the bot answers a mention and
// a reply to it, never a message meant for others (which the model never
// sees, not even as history); with telegram.require_mention off it
// answers every message.
func TestE2ETelegramRequireMention(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	e := startTelegramE2E(ctx, t, nil)
	tg, llm := e.tg, e.llm
	const group = -1007770001
	push := func(text string, replyTo int) {
		tg.PushMessage(telegramtest.Incoming{ChatID: group, ChatType: "supergroup", UserID: 71, UserName: "Ada", Text: text, ReplyTo: replyTo})
	}

	push("just people talking", 0)
	push("@"+telegramtest.BotUsername+" hello there", 0)
	answer := newReplyContaining(ctx, t, tg, group, 0, "echo: hello there")
	if asked(llm, "just people talking") {
		t.Error("a group message without a mention reached the model")
	}
	if msgs := tg.Messages(group); slices.ContainsFunc(msgs, func(m telegramtest.Message) bool { return strings.Contains(m.Visible, "people talking") }) {
		t.Errorf("a group message without a mention was answered: %+v", msgs)
	}

	push("and one more thing", answer.ID)
	newReplyContaining(ctx, t, tg, group, answer.ID, "echo: and one more thing")

	e.d.stop()
	e.env["SWITCHBOARD_TELEGRAM_REQUIRE_MENTION"] = "false"
	e.restart(ctx, t)
	after := lastID(tg, group)
	push("anyone around?", 0)
	newReplyContaining(ctx, t, tg, group, after, "echo: anyone around?")
}
