package agentcore_test

import (
	"context"
	"testing"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
	"github.com/switchboard-chat/switchboard/tools"
)

// staleSession starts session with the user message "SAY: one" and
// returns an agent (with extra tools), the store, that message's seq and
// the session as read then.
func staleSession(t *testing.T, session string, extra ...tools.Tool) (*agentcore.Agent, *postgres.DB, int64, []agentcore.Message) {
	t.Helper()
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	llm := llmtest.NewServer()
	t.Cleanup(llm.Close)
	a := newAgent(t, llm, db, extra...)
	first, err := db.Append(ctx, session, agentcore.Message{Role: agentcore.RoleUser, Content: "SAY: one"})
	if err != nil {
		t.Fatal(err)
	}
	stale, err := db.Load(ctx, session, 0)
	if err != nil {
		t.Fatal(err)
	}
	return a, db, first, stale
}

// TestRunWithStaleWindowReadsAgain: the window handed to Run was read
// before another replica's run answered the session and a new message
// arrived. The first store conflicts; the run reads the session again and
// answers the new message instead of stopping.
func TestRunWithStaleWindowReadsAgain(t *testing.T) {
	ctx := context.Background()
	const session = "a/test:stale"
	a, db, first, stale := staleSession(t, session)
	// Another replica answers "one"; then "two" arrives.
	if _, _, err := db.Insert(ctx, session, first, agentcore.Message{Role: agentcore.RoleAssistant, Content: "one"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Append(ctx, session, agentcore.Message{Role: agentcore.RoleUser, Content: "SAY: two"}); err != nil {
		t.Fatal(err)
	}

	res, err := a.Run(ctx, agentcore.RunInput{Session: session, Window: stale})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "two" || res.Replies != 1 {
		t.Fatalf("result %+v, want one reply \"two\"", res)
	}
	msgs, err := db.Load(ctx, session, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs {
		got = append(got, string(m.Role)+":"+m.Content)
	}
	want := []string{"user:SAY: one", "assistant:one", "user:SAY: two", "assistant:two"}
	if len(got) != len(want) {
		t.Fatalf("stored %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("stored %q, want %q", got, want)
		}
	}
}

// TestRunWithStaleWindowLeavesAnotherRunsStep: when the session read again
// ends in a tool step of another run (which may be executing it now), the
// run stops without executing the step's tools.
func TestRunWithStaleWindowLeavesAnotherRunsStep(t *testing.T) {
	ctx := context.Background()
	count := &counter{}
	const session = "a/test:stale-step"
	a, db, first, stale := staleSession(t, session, count)
	step := agentcore.Message{Role: agentcore.RoleAssistant, ToolCalls: []agentcore.ToolCall{{ID: "call_other", Name: "count", Arguments: []byte("{}")}}}
	if _, _, err := db.Insert(ctx, session, first, step); err != nil {
		t.Fatal(err)
	}
	res, err := a.Run(ctx, agentcore.RunInput{Session: session, Window: stale})
	if err != nil {
		t.Fatal(err)
	}
	if n := count.runs.Load(); n != 0 {
		t.Fatalf("another run's tool executed %d times", n)
	}
	if res.Replies != 0 {
		t.Fatalf("result %+v, want no reply", res)
	}
}
