package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
)

// TestE2EFallbackAfter500: while the model server answers HTTP 500 for
// llm.model, the person gets the answer of the llm.fallbacks model (after
// the model's retries), the log says which failed and which answered, and
// /status says a fallback is answering; once the model is back, it answers
// again.
func TestE2EFallbackAfter500(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	tg, llm := fakes(t)
	llm.Handle(func(r llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "answered by " + r.Model}
	})
	env := externalEnv(t, tg, llm, "")
	env["SWITCHBOARD_LLM_FALLBACKS"] = "fallback-model"
	d := startReplica(ctx, t, env, "")
	defer d.stop()
	const chat = 5151

	llm.FailModel("test-model", http.StatusInternalServerError)
	after := lastID(tg, chat)
	tg.SendText(chat, chat, "Fay", "hello")
	got := newReplyContaining(ctx, t, tg, chat, after, "answered by")
	if got.Visible != "answered by fallback-model" {
		t.Fatalf("reply = %q, want the fallback model's answer", got.Visible)
	}
	var asked []string
	for _, r := range llm.Requests() {
		asked = append(asked, r.Model)
	}
	if want := "test-model,test-model,test-model,test-model,fallback-model"; strings.Join(asked, ",") != want {
		t.Fatalf("models asked = %v, want the model's 4 attempts and then the fallback", asked)
	}
	if log := d.out.String(); strings.Count(log, "a fallback model answered") != 1 ||
		!strings.Contains(log, "model=test-model") || !strings.Contains(log, "answered_by=fallback-model") {
		t.Fatalf("want one warning naming test-model and fallback-model; log:\n%s", log)
	}

	after = lastID(tg, chat)
	tg.SendText(chat, chat, "Fay", "/status")
	newReplyContaining(ctx, t, tg, chat, after, "model test-model failing (HTTP 500); answering with fallback-model since ")

	llm.FailModel("test-model", 0)
	after = lastID(tg, chat)
	tg.SendText(chat, chat, "Fay", "and now?")
	if got := newReplyContaining(ctx, t, tg, chat, after, "answered by"); got.Visible != "answered by test-model" {
		t.Fatalf("reply = %q, want test-model's own answer once it is back", got.Visible)
	}
	after = lastID(tg, chat)
	tg.SendText(chat, chat, "Fay", "/status")
	newReplyContaining(ctx, t, tg, chat, after, "model test-model answering again since ")
}
