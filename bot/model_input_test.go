package bot_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
)

// What the model is sent: the handoff note, never a failed run's apology,
// never a message past its cap.

// requestsWith returns the model requests whose body contains text.
func requestsWith(p *pipeline, text string) int {
	n := 0
	for _, r := range p.llm.Requests() {
		if strings.Contains(string(r.Body), text) {
			n++
		}
	}
	return n
}

// sentWith counts the messages sent to chat that contain text.
func sentWith(p *pipeline, chat, text string) int {
	n := 0
	for _, m := range p.ch.SentTo(chat) {
		if strings.Contains(m.Text, text) {
			n++
		}
	}
	return n
}

// TestHandoffNoteReachesTheReceivingModel: after a handoff, the receiving
// agent's first model call carries the note (who, why, the last messages),
// as a user message, not as the model's own words.
func TestHandoffNoteReachesTheReceivingModel(t *testing.T) {
	p := startPipeline(t, pipelineOptions{Agents: []string{"ops"}, Handoff: true})
	ctx := context.Background()
	p.router.Handle(ctx, msg("room", "u1", "the disk on db-3 is full"))
	p.ch.WaitFor(t, "room", 1)
	if _, err := p.handoff.To(ctx, channels.Address{Platform: "test", ChatID: "room"}, "ops", "an outage question", "test:u1"); err != nil {
		t.Fatal(err)
	}
	p.ch.WaitFor(t, "room", 2) // "Now talking to ops"
	p.router.Handle(ctx, msg("room", "u1", "can you help?"))
	p.ch.WaitFor(t, "room", 3)
	var first *struct{ role, content string }
	for _, r := range p.llm.Requests() {
		if r.Model != "m-ops" {
			continue
		}
		for _, m := range r.Messages {
			if strings.Contains(m.Content, "[Handoff]") {
				first = &struct{ role, content string }{m.Role, m.Content}
			}
		}
		break // the receiving agent's first call only
	}
	if first == nil {
		t.Fatalf("ops's first model call had no handoff note: %+v", p.llm.Requests())
	}
	for _, want := range []string{"default handed this conversation to you", "an outage question", "user: the disk on db-3 is full"} {
		if !strings.Contains(first.content, want) {
			t.Fatalf("note = %q, want it to say %q", first.content, want)
		}
	}
	if first.role != "user" {
		t.Fatalf("the note was sent as %q, want user (not the model's own words)", first.role)
	}
}

// TestFailedRunApologyIsNotShownToTheModel: a run whose model call fails
// tells the chat once, counts its message as answered (recovery leaves
// it), and the next message's model call does not carry the apology.
func TestFailedRunApologyIsNotShownToTheModel(t *testing.T) {
	p := newPipeline(t, bot.Limits{}, bot.AccessOptions{})
	ctx := context.Background()
	p.llm.Fail(http.StatusInternalServerError, 1)
	p.router.Handle(ctx, msg("c1", "u1", "first"))
	if got := p.ch.WaitFor(t, "c1", 1)[0].Text; !strings.Contains(got, "Sorry, I couldn't answer that") {
		t.Fatalf("reply = %q, want the apology", got)
	}
	unfinished, err := p.db.Unfinished(ctx, bot.UnfinishedQuery{OlderThan: -time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range unfinished {
		if strings.HasSuffix(u.Session, "/test:c1") {
			t.Fatalf("recovery would run the failed session again: %+v", u)
		}
	}
	p.router.Handle(ctx, msg("c1", "u1", "second"))
	if got := p.ch.WaitFor(t, "c1", 2)[1].Text; !strings.Contains(got, "echo: second") {
		t.Fatalf("second reply = %q", got)
	}
	if n := len(p.llm.Requests()); n != 2 {
		t.Fatalf("%d model calls, want 2", n)
	}
	if n := requestsWith(p, "Sorry, I couldn't"); n != 0 {
		t.Fatalf("%d model calls were shown the apology as the model's own words", n)
	}
	if n := sentWith(p, "c1", "Sorry, I couldn't"); n != 1 {
		t.Fatalf("the apology was sent %d times, want once", n)
	}
}

// TestUnknownModelAsksAnAdmin: when the server does not know the model,
// the person is told it is misconfigured, which model, and that an admin
// must fix llm.model, not to try again in a moment.
func TestUnknownModelAsksAnAdmin(t *testing.T) {
	p := newPipeline(t, bot.Limits{}, bot.AccessOptions{})
	p.llm.Fail(http.StatusNotFound, 1)
	p.router.Handle(context.Background(), msg("c1", "u1", "hello"))
	got := p.ch.WaitFor(t, "c1", 1)[0].Text
	for _, want := range []string{`does not know the model "m"`, "misconfigured", "An admin must set llm.model"} {
		if !strings.Contains(got, want) {
			t.Fatalf("reply = %q, want it to say %q", got, want)
		}
	}
	if strings.Contains(got, "try again in a moment") {
		t.Fatalf("reply = %q: trying again cannot help", got)
	}
}

// TestHugeMessageIsCut: a message past the cap is stored and sent to the
// model cut, with a marker saying how much was not read, and the person is
// told; the next message's model call carries the cut text, not the
// whole.
func TestHugeMessageIsCut(t *testing.T) {
	p := newPipeline(t, bot.Limits{}, bot.AccessOptions{})
	ctx := context.Background()
	huge := strings.Repeat("é", 40_000) + strings.Repeat("x", 1_000_000)
	p.router.Handle(ctx, msg("c1", "u1", huge))
	got := p.ch.WaitFor(t, "c1", 2)
	if !strings.Contains(got[0].Text, "Your message was too long: I read only its first 40 000 characters (1 000 000 more were cut)") {
		t.Fatalf("first message to the chat = %q, want the cut notice", got[0].Text)
	}
	p.router.Handle(ctx, msg("c1", "u1", "next"))
	p.ch.WaitFor(t, "c1", 3)
	reqs := p.llm.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	want := strings.Repeat("é", 40_000) + "\n[… message cut: 1 000 000 more characters not read]"
	for i, r := range reqs {
		// The cut text, twice (the echo repeats it), is 160 kB; uncut, 1 MB.
		if len(r.Body) > 300_000 {
			t.Fatalf("model call %d was %d bytes: the message was not cut", i, len(r.Body))
		}
		if r.Messages[0].Role != "user" || r.Messages[0].Content != want {
			t.Fatalf("model call %d: the message is not the cut text with its marker: %.80q", i, r.Messages[0].Content)
		}
	}
}
