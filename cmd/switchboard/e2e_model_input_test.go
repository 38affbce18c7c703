package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

// requestsTo returns the model requests, in order, that asked for model.
func requestsTo(llm *llmtest.Server, model string) []llmtest.Request {
	var out []llmtest.Request
	for _, r := range llm.Requests() {
		if r.Model == model {
			out = append(out, r)
		}
	}
	return out
}

// TestE2EHandoffNoteReachesTheModel: after /handoff, the first model call
// of the receiving agent carries the handoff note with the conversation so
// far, as a user message (the built daemon, Telegram fake, scripted LLM).
func TestE2EHandoffNoteReachesTheModel(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	tg, llm := fakes(t)
	base := externalEnv(t, tg, llm, "")
	d := startReplica(ctx, t, base, "agents:\n  - name: ops\n    model: ops-model\n")
	defer d.stop()
	const chat = 6262
	ask := func(text, want string) {
		t.Helper()
		after := lastID(tg, chat)
		tg.SendText(chat, chat, "Hal", text)
		newReplyContaining(ctx, t, tg, chat, after, want)
	}
	ask("the disk on db-3 is full", "echo: the disk on db-3 is full")
	ask("/handoff ops", "Now talking to ops")
	ask("can you help?", "echo: can you help?")
	reqs := requestsTo(llm, "ops-model")
	if len(reqs) == 0 {
		t.Fatalf("ops's model was never called: %+v", llm.Requests())
	}
	var note *llmtest.Message
	for i, m := range reqs[0].Messages {
		if strings.Contains(m.Content, "[Handoff] default handed this conversation to you") {
			note = &reqs[0].Messages[i]
		}
	}
	if note == nil || note.Role != "user" || !strings.Contains(note.Content, "user: the disk on db-3 is full") {
		t.Fatalf("ops's first model call = %s; want the handoff note, as a user message, quoting the conversation", reqs[0].Body)
	}
}

// TestE2EHugeMessageAndUnknownModel: a 10 MB Telegram message is cut to
// Telegram's 4 096 characters before the model sees it and the person is
// told; when the server does not know the model, the person is told an
// admin must fix llm.model, and the next model call is not shown that
// apology as the model's own words.
func TestE2EHugeMessageAndUnknownModel(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	tg, llm := fakes(t)
	d := startReplica(ctx, t, externalEnv(t, tg, llm, ""), "")
	defer d.stop()
	const chat = 6363
	after := lastID(tg, chat)
	tg.SendText(chat, chat, "Hal", strings.Repeat("x", 10<<20))
	newReplyContaining(ctx, t, tg, chat, after, "Your message was too long: I read only its first 4 096 characters")
	newReplyContaining(ctx, t, tg, chat, after, "[… message cut: 10 481 664 more characters not read]")
	if reqs := llm.Requests(); len(reqs) != 1 || len(reqs[0].Body) > 64<<10 {
		t.Fatalf("%d model calls, the first of %d bytes; want one, of the cut message", len(reqs), len(reqs[0].Body))
	}

	llm.Fail(http.StatusNotFound, 1)
	after = lastID(tg, chat)
	tg.SendText(chat, chat, "Hal", "hello")
	got := newReplyContaining(ctx, t, tg, chat, after, "An admin must set llm.model")
	if !strings.Contains(got.Visible, `does not know the model "test-model"`) || strings.Contains(got.Visible, "try again in a moment") {
		t.Fatalf("reply = %q; want it to name the model and not ask to try again", got.Visible)
	}
	after = lastID(tg, chat)
	tg.SendText(chat, chat, "Hal", "and now?")
	newReplyContaining(ctx, t, tg, chat, after, "echo: and now?")
	reqs := llm.Requests()
	if last := reqs[len(reqs)-1]; strings.Contains(string(last.Body), "Sorry, I couldn't") {
		t.Fatalf("the model was shown the apology as its own words: %.2000s", last.Body)
	}
}

// TestE2EPhotoCaptionReachesTheModel: a photo the Bot API will not serve
// (its file id is unknown) does not hold up its caption: the person is told
// the photo could not be downloaded, and the model gets the caption with the
// line saying so and answers it.
func TestE2EPhotoCaptionReachesTheModel(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	tg, llm := fakes(t)
	d := startReplica(ctx, t, externalEnv(t, tg, llm, ""), "")
	defer d.stop()
	const chat = 6464
	after := lastID(tg, chat)
	tg.PushMessage(telegramtest.Incoming{ChatID: chat, UserID: chat, UserName: "Hal", Extra: map[string]any{
		"caption": "why is this build red?",
		"photo":   []any{map[string]any{"file_id": "p", "file_unique_id": "p", "width": 1, "height": 1}},
	}})
	got := newReplyContaining(ctx, t, tg, chat, after, "echo: why is this build red?")
	if strings.Contains(got.Visible, "I can only read text") {
		t.Fatalf("the caption was not answered: %q", got.Visible)
	}
	newReplyContaining(ctx, t, tg, chat, after, "I could not download photo.jpg: the platform would not serve it")
	reqs := llm.Requests()
	if len(reqs) == 0 {
		t.Fatal("the model was never called")
	}
	last := reqs[len(reqs)-1].Messages
	if m := last[len(last)-1]; m.Role != "user" || !strings.Contains(m.Content, "why is this build red?") ||
		!strings.Contains(m.Content, "[attachment: photo.jpg, not downloaded: the platform would not serve it]") {
		t.Fatalf("the model's last message = %+v; want the caption and the line saying the photo was not downloaded", m)
	}
}
