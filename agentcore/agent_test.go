package agentcore_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
	"github.com/switchboard-chat/switchboard/tools"
)

// counter is a tool that counts its runs.
type counter struct{ runs atomic.Int32 }

func (*counter) Name() string                { return "count" }
func (*counter) Description() string         { return "counts" }
func (*counter) Parameters() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (*counter) SideEffect() tools.SideEffect {
	return tools.SideEffectNone
}
func (c *counter) Execute(context.Context, json.RawMessage) tools.Result {
	n := c.runs.Add(1)
	return tools.Result{ForLLM: "run " + string(rune('0'+n))}
}

func newAgent(t *testing.T, llm *llmtest.Server, db *postgres.DB, extra ...tools.Tool) *agentcore.Agent {
	reg := tools.NewRegistry(tools.RegistryOptions{})
	for _, tl := range append([]tools.Tool{tools.Datetime{}}, extra...) {
		if err := reg.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	return &agentcore.Agent{
		Name: "a", Model: "m", SystemPrompt: "be brief", History: db, Tools: reg,
		Provider: agentcore.NewOpenAI(agentcore.OpenAIOptions{BaseURL: llm.URL(), Model: "m"}),
	}
}

func TestRunToolLoopPersistsEveryStep(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	llm := llmtest.NewServer()
	defer llm.Close()
	a := newAgent(t, llm, db)
	res, err := a.Run(ctx, agentcore.RunInput{Session: "a/test:1", User: &agentcore.Message{Content: "time? CALL_TOOL:datetime"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, "tool datetime said:") || res.Iterations != 2 {
		t.Fatalf("result = %+v", res)
	}
	msgs, err := db.Load(ctx, "a/test:1", 0)
	if err != nil {
		t.Fatal(err)
	}
	roles := ""
	for _, m := range msgs {
		roles += string(m.Role) + " "
	}
	if roles != "user assistant tool assistant " {
		t.Fatalf("persisted roles = %q", roles)
	}
	if reqs := llm.Requests(); len(reqs) != 2 || reqs[0].Messages[0].Role != "system" {
		t.Fatalf("requests = %+v", reqs)
	}
}

// TestRunResumesInterruptedToolCall: a crash after the model asked for a
// tool but before its result was stored leaves an assistant message with
// tool calls; the next Run executes the missing call and finishes.
func TestRunResumesInterruptedToolCall(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	llm := llmtest.NewServer()
	defer llm.Close()
	c := &counter{}
	a := newAgent(t, llm, db, c)
	_, err := db.Append(ctx, "a/test:2",
		agentcore.Message{Role: agentcore.RoleUser, Content: "go CALL_TOOL:count"},
		agentcore.Message{Role: agentcore.RoleAssistant, ToolCalls: []agentcore.ToolCall{{ID: "call_1", Name: "count", Arguments: json.RawMessage(`{}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Run(ctx, agentcore.RunInput{Session: "a/test:2"})
	if err != nil {
		t.Fatal(err)
	}
	if c.runs.Load() != 1 || !strings.Contains(res.Text, "tool count said: run 1") {
		t.Fatalf("runs=%d result=%+v", c.runs.Load(), res)
	}
	// Running again on a finished session does nothing.
	again, err := a.Run(ctx, agentcore.RunInput{Session: "a/test:2"})
	if err != nil || !again.Idle || c.runs.Load() != 1 || len(llm.Requests()) != 1 {
		t.Fatalf("second run = %+v, %v (runs %d, llm calls %d)", again, err, c.runs.Load(), len(llm.Requests()))
	}
}

func TestRunStopsAtMaxIterations(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	llm := llmtest.NewServer()
	defer llm.Close()
	// A model that calls a tool forever.
	llm.Handle(func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c", Name: "datetime", Arguments: "{}"}}}
	})
	a := newAgent(t, llm, db)
	a.MaxIterations = 3
	res, err := a.Run(ctx, agentcore.RunInput{Session: "a/test:3", User: &agentcore.Message{Content: "loop"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Iterations != 3 || !strings.Contains(res.Text, "stopped after 3 steps") {
		t.Fatalf("result = %+v", res)
	}
}

func TestRunRefusesToolsPolicyHides(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	llm := llmtest.NewServer()
	defer llm.Close()
	c := &counter{}
	a := newAgent(t, llm, db, c)
	a.AllowTool = func(t tools.Tool) bool { return t.Name() != "count" }
	// The model calls a tool it was not offered, with broken arguments.
	llm.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "x", Name: "count", Arguments: "{}"}, {ID: "y", Name: "datetime", Arguments: "{not json"}}},
		llmtest.Reply{Text: "ok"},
	)
	if _, err := a.Run(ctx, agentcore.RunInput{Session: "a/test:4", User: &agentcore.Message{Content: "hi"}}); err != nil {
		t.Fatal(err)
	}
	if c.runs.Load() != 0 {
		t.Fatal("a tool hidden by policy ran")
	}
	reqs := llm.Requests()
	for _, tl := range reqs[0].Tools {
		if tl == "count" {
			t.Fatal("a hidden tool was offered to the model")
		}
	}
	msgs, _ := db.Load(ctx, "a/test:4", 0)
	var results []string
	for _, m := range msgs {
		if m.Role == agentcore.RoleTool {
			results = append(results, m.Content)
		}
	}
	if len(results) != 2 || !strings.Contains(results[0], "not available") || !strings.Contains(results[1], "not valid JSON") {
		t.Fatalf("tool results = %q", results)
	}
}
