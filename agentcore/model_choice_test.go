package agentcore_test

import (
	"context"
	"testing"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// TestRunInputModelChoosesProviderAndModel: a run given a ModelChoice asks
// that provider for that model; the agent itself is unchanged for the next
// run.
func TestRunInputModelChoosesProviderAndModel(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	own, other := llmtest.NewServer(), llmtest.NewServer()
	defer own.Close()
	defer other.Close()
	a := newAgent(t, own, db)
	choice := &agentcore.ModelChoice{Provider: agentcore.NewOpenAI(agentcore.OpenAIOptions{BaseURL: other.URL(), Model: "big"}), Model: "big"}
	res, err := a.Run(ctx, agentcore.RunInput{Session: "a/test:mc", User: &agentcore.Message{Content: "hi"}, Model: choice})
	if err != nil {
		t.Fatal(err)
	}
	if reqs := other.Requests(); len(reqs) != 1 || reqs[0].Model != "big" || len(own.Requests()) != 0 || res.Model != "big" {
		t.Fatalf("chosen run: other %+v, own %d requests, result model %q", reqs, len(own.Requests()), res.Model)
	}
	if _, err := a.Run(ctx, agentcore.RunInput{Session: "a/test:mc", User: &agentcore.Message{Content: "again"}}); err != nil {
		t.Fatal(err)
	}
	if reqs := own.Requests(); len(reqs) != 1 || reqs[0].Model != "m" || a.Model != "m" {
		t.Fatalf("next run: own %+v, agent model %q", reqs, a.Model)
	}
}
