package agentcore_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
	"github.com/switchboard-chat/switchboard/tools"
)

// journal is a tool that records its runs, and defers a note of each to the
// end of the step (tools.AtStepEnd).
type journal struct {
	mu    sync.Mutex
	lines []string
}

func (*journal) Name() string                 { return "note" }
func (*journal) Description() string          { return "notes" }
func (*journal) Parameters() json.RawMessage  { return json.RawMessage(`{"type":"object"}`) }
func (*journal) SideEffect() tools.SideEffect { return tools.SideEffectNone }
func (j *journal) add(s string)               { j.mu.Lock(); j.lines = append(j.lines, s); j.mu.Unlock() }
func (j *journal) Execute(ctx context.Context, raw json.RawMessage) tools.Result {
	var a struct{ Text string }
	_ = json.Unmarshal(raw, &a)
	j.add("ran " + a.Text)
	tools.AtStepEnd(ctx, func(context.Context) { j.add("announced " + a.Text) })
	return tools.Result{ForLLM: "noted"}
}

func TestDeferredEffectsRunWhenTheStepEnds(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	llm := llmtest.NewServer()
	defer llm.Close()
	llm.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{Name: "note", Arguments: `{"text":"a"}`},
			{Name: "note", Arguments: `{"text":"b"}`},
		}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "note", Arguments: `{"text":"c"}`}}},
		llmtest.Reply{Text: "done"},
	)
	j := &journal{}
	if _, err := newAgent(t, llm, db, j).Run(ctx, agentcore.RunInput{Session: "a/test:steps", User: &agentcore.Message{Content: "go"}}); err != nil {
		t.Fatal(err)
	}
	want := []string{"ran a", "ran b", "announced a", "announced b", "ran c", "announced c"}
	if !slices.Equal(j.lines, want) {
		t.Fatalf("order = %q, want %q", j.lines, want)
	}
}
