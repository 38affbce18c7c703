package agentcore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// TestRunShowsANoteAheadOfTheFirstUserMessage: a session that starts with
// a note (the one a handoff leaves the receiving agent) gives the model the
// note with the first user message, as a user message, not as its own
// words. The window's trim to the first user turn used to drop it.
func TestRunShowsANoteAheadOfTheFirstUserMessage(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	llm := llmtest.NewServer()
	defer llm.Close()
	a := newAgent(t, llm, db)
	a.HistoryLimit = 10
	const session = "a/test:note"
	if _, err := db.Append(ctx, session, agentcore.Note("handoff:1", "[Handoff] b handed this conversation to you: billing question")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(ctx, agentcore.RunInput{Session: session, User: &agentcore.Message{Content: "hello", ExternalID: "u1"}}); err != nil {
		t.Fatal(err)
	}
	reqs := llm.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model calls, want 1", len(reqs))
	}
	var roles []string
	for _, m := range reqs[0].Messages {
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, " "); got != "system user user" ||
		!strings.Contains(reqs[0].Messages[1].Content, "billing question") || reqs[0].Messages[2].Content != "hello" {
		t.Fatalf("the model was sent %q: %+v; want the note as a user message before %q", got, reqs[0].Messages, "hello")
	}
}

// TestRunNeverShowsANotice: a notice (a failed run's apology) counts as
// the answer of the message before it, but no model call is shown it.
func TestRunNeverShowsANotice(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	llm := llmtest.NewServer()
	defer llm.Close()
	a := newAgent(t, llm, db)
	const session = "a/test:notice"
	if _, err := db.Append(ctx, session, agentcore.Message{Role: agentcore.RoleUser, Content: "first", ExternalID: "u1"},
		agentcore.Notice("run-failed:1", "Sorry, I couldn't answer that")); err != nil {
		t.Fatal(err)
	}
	res, err := a.Run(ctx, agentcore.RunInput{Session: session})
	if err != nil || !res.Idle {
		t.Fatalf("run = %+v, %v; want idle: the notice answered the message", res, err)
	}
	if _, err := a.Run(ctx, agentcore.RunInput{Session: session, User: &agentcore.Message{Content: "second", ExternalID: "u2"}}); err != nil {
		t.Fatal(err)
	}
	reqs := llm.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model calls, want 1", len(reqs))
	}
	if strings.Contains(string(reqs[0].Body), "Sorry, I couldn't") {
		t.Fatalf("the model was shown the notice: %s", reqs[0].Body)
	}
	if n := len(reqs[0].Messages); n != 3 || reqs[0].Messages[1].Content != "first" || reqs[0].Messages[2].Content != "second" {
		t.Fatalf("messages = %+v; want system, first, second", reqs[0].Messages)
	}
}
