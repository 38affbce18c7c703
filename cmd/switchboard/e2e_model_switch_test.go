package main

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

// modelAsked returns the model of the request that carried text as its
// last message, "" when none did.
func modelAsked(llm *llmtest.Server, text string) string {
	for _, r := range llm.Requests() {
		if n := len(r.Messages); n > 0 && strings.Contains(r.Messages[n-1].Content, text) {
			return r.Model
		}
	}
	return ""
}

// TestE2EModelSwitch: an admin switches a group to another model, which
// the next runs ask; a non-admin is refused and the model stays; the
// choice survives a restart; /model default goes back.
func TestE2EModelSwitch(t *testing.T) {
	ctx := testCtx(t, 3*time.Minute)
	tg, llm := fakes(t)
	dir := t.TempDir()
	writeConfig(t, dir, "models:\n  - {name: smart, model: big-model}\n  - {name: fast, model: small-model}\n")
	addr := freeAddr(t)
	env := externalEnv(t, tg, llm, addr)
	env["SWITCHBOARD_ADMINS"] = "telegram:77"
	d := startDaemon(t, dir, addr, env)
	d.waitReady(ctx)
	const group = -1008880001
	say := func(user int64, text, want string) {
		t.Helper()
		after := lastID(tg, group)
		tg.PushMessage(telegramtest.Incoming{ChatID: group, ChatType: "supergroup", UserID: user, UserName: "U", Text: text})
		newReplyContaining(ctx, t, tg, group, after, want)
	}
	ask := func(text, wantModel string) {
		t.Helper()
		say(78, "@"+telegramtest.BotUsername+" "+text, "echo: "+text)
		if got := modelAsked(llm, text); got != wantModel {
			t.Errorf("%q was asked of model %q, want %q", text, got, wantModel)
		}
	}

	ask("first question", "test-model")
	say(78, "/model", "Model: default: test-model (default)")
	say(77, "/model huge", "No model is called huge")
	say(77, "/model smart", "Model: smart: big-model")
	say(78, "/status", "Model: smart: big-model")
	ask("second question", "big-model")
	say(78, "/model fast", "Only admins can switch the model; ask one of them.")
	ask("third question", "big-model")

	d.stop()
	d = startDaemon(t, dir, addr, env)
	d.waitReady(ctx)
	ask("after the restart", "big-model")
	say(77, "/model default", "Model: default: test-model (default)")
	ask("back to normal", "test-model")
}
