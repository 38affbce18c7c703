package agentcore

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/switchboard-chat/switchboard/tools"
)

// DefaultMaxIterations bounds the LLM ⇄ tools loop of one run.
const DefaultMaxIterations = 20

// Agent is one configured agent: a model, a system prompt and the tools it
// may use. An Agent is safe for concurrent runs on different sessions.
type Agent struct {
	Name          string
	Model         string
	SystemPrompt  string
	Provider      Provider
	Tools         *tools.Registry
	History       History
	MaxIterations int // 0 → DefaultMaxIterations
	HistoryLimit  int // messages of history sent to the model; 0 → all
	MaxTokens     int
	// AllowTool filters the tools offered to and callable by the model
	// (policy). Nil allows every registered tool.
	AllowTool func(tools.Tool) bool
	Logger    *slog.Logger
	// ObserveLLM, if set, is told the duration and outcome of each LLM call.
	ObserveLLM func(took time.Duration, err error)
}

// RunInput is what a run needs to know.
type RunInput struct {
	Session string     // session key (SessionKey.String())
	Call    tools.Call // where the conversation is; passed to tools
	// User is the new user message, or nil to continue the session as stored
	// (after a restart, or when the message was appended already).
	User *Message
	// OnDelta receives streamed text, if set.
	OnDelta func(string)
}

// RunResult is the outcome of a run.
type RunResult struct {
	Text       string // final reply; empty when there was nothing to do
	Seq        int64  // sequence number of the final reply in the session
	Iterations int
	Usage      Usage
	// Idle is true when the session needed no run (its last message was
	// already a final reply).
	Idle bool
}

// Run drives the conversation of one session until the model gives a final
// reply or MaxIterations is reached. Every message is appended to History
// as it happens, so a run interrupted at any point continues where it left
// off when Run is called again for the session with User nil.
func (a *Agent) Run(ctx context.Context, in RunInput) (RunResult, error) {
	log := a.logger().With("agent", a.Name, "session", in.Session)
	if in.User != nil {
		u := *in.User
		u.Role = RoleUser
		if _, err := a.History.Append(ctx, in.Session, u); err != nil {
			return RunResult{}, fmt.Errorf("record user message: %w", err)
		}
	}
	var res RunResult
	maxIter := a.MaxIterations
	if maxIter <= 0 {
		maxIter = DefaultMaxIterations
	}
	specs := a.Tools.Specs(a.AllowTool)
	for res.Iterations < maxIter {
		msgs, err := a.History.Load(ctx, in.Session, a.HistoryLimit)
		if err != nil {
			return res, fmt.Errorf("load history: %w", err)
		}
		if w := trimToUserTurn(msgs); len(w) == 0 && len(msgs) > 0 && a.HistoryLimit > 0 {
			// The window holds only one long tool sequence: widen it.
			if msgs, err = a.History.Load(ctx, in.Session, 0); err != nil {
				return res, fmt.Errorf("load history: %w", err)
			}
		}
		msgs = trimToUserTurn(orderToolResults(msgs))
		if len(msgs) == 0 {
			res.Idle = true
			return res, nil
		}
		if call, missing := pendingToolCalls(msgs); missing != nil {
			// A run stopped mid-way (crash, restart): run what is missing.
			if err := a.runTools(ctx, in, call.ToolCalls, missing); err != nil {
				return res, err
			}
			continue
		}
		if last := msgs[len(msgs)-1]; last.Role == RoleAssistant {
			// Already answered: nothing to do (a duplicate run, or resume).
			res.Idle = true
			return res, nil
		}
		res.Iterations++
		start := time.Now()
		resp, err := a.Provider.Chat(ctx, Request{
			Model: a.Model, System: a.SystemPrompt, Messages: msgs, Tools: specs, MaxTokens: a.MaxTokens,
		}, in.OnDelta)
		if a.ObserveLLM != nil {
			a.ObserveLLM(time.Since(start), err)
		}
		if err != nil {
			return res, fmt.Errorf("llm call: %w", err)
		}
		res.Usage.InputTokens += resp.Usage.InputTokens
		res.Usage.OutputTokens += resp.Usage.OutputTokens
		reply := Message{Role: RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls}
		seq, err := a.History.Append(ctx, in.Session, reply)
		if err != nil {
			return res, fmt.Errorf("record reply: %w", err)
		}
		if len(resp.ToolCalls) == 0 {
			res.Text, res.Seq = resp.Content, seq
			return res, nil
		}
		log.Debug("tool calls", "count", len(resp.ToolCalls), "iteration", res.Iterations)
		if err := a.runTools(ctx, in, resp.ToolCalls, nil); err != nil {
			return res, err
		}
	}
	text := fmt.Sprintf("I stopped after %d steps without finishing. Ask me to continue, or narrow the request.", maxIter)
	seq, err := a.History.Append(ctx, in.Session, Message{Role: RoleAssistant, Content: text})
	if err != nil {
		return res, fmt.Errorf("record reply: %w", err)
	}
	res.Text, res.Seq = text, seq
	return res, nil
}

// runTools executes calls (only those in want, when want is non-nil) and
// appends each result as soon as it is known.
func (a *Agent) runTools(ctx context.Context, in RunInput, calls []ToolCall, want map[string]bool) error {
	for _, c := range calls {
		if want != nil && !want[c.ID] {
			continue
		}
		call := in.Call
		if call.Session == "" {
			call.Session = in.Session
		}
		res := a.execute(ctx, call, c)
		msg := Message{Role: RoleTool, ToolCallID: c.ID, ToolName: c.Name, Content: res.ForLLM, IsError: res.IsError}
		if _, err := a.History.Append(ctx, in.Session, msg); err != nil {
			return fmt.Errorf("record tool result: %w", err)
		}
	}
	return nil
}

func (a *Agent) execute(ctx context.Context, call tools.Call, c ToolCall) tools.Result {
	t, ok := a.Tools.Get(c.Name)
	if !ok || (a.AllowTool != nil && !a.AllowTool(t)) {
		return tools.ErrorResult(fmt.Sprintf("tool %q is not available to you", c.Name))
	}
	args := c.Arguments
	if len(args) > 0 && !isJSONObject(args) {
		return tools.ErrorResult("arguments are not valid JSON; send a JSON object matching the tool's schema")
	}
	call.Agent = a.Name
	call.ToolCallID = c.ID
	return a.Tools.Execute(ctx, call, c.Name, args)
}

// isJSONObject reports whether b is one JSON object (providers pass
// malformed arguments through as a JSON string).
func isJSONObject(b json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(b, &m) == nil && m != nil
}

func (a *Agent) logger() *slog.Logger {
	if a.Logger != nil {
		return a.Logger
	}
	return slog.Default()
}

// trimToUserTurn drops leading messages until the first user message, so a
// history window never starts with orphaned tool results.
func trimToUserTurn(msgs []Message) []Message {
	for i, m := range msgs {
		if m.Role == RoleUser {
			return msgs[i:]
		}
	}
	return nil
}

// orderToolResults returns msgs with every tool result right after the
// assistant message that asked for it. People may write while a run waits
// on a tool (an approval, say); their messages are stored as they arrive,
// between the call and its result, but providers require the results to
// follow the call, so such messages move after the results.
func orderToolResults(msgs []Message) []Message {
	out := make([]Message, 0, len(msgs))
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		out = append(out, m)
		if m.Role != RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		open := map[string]bool{}
		for _, c := range m.ToolCalls {
			open[c.ID] = true
		}
		var deferred []Message
		j := i + 1
		for ; j < len(msgs) && len(open) > 0; j++ {
			if n := msgs[j]; n.Role == RoleTool && open[n.ToolCallID] {
				out = append(out, n)
				delete(open, n.ToolCallID)
			} else {
				deferred = append(deferred, n)
			}
		}
		out = append(out, deferred...)
		i = j - 1
	}
	return out
}

// pendingToolCalls finds the newest assistant message whose tool calls
// lack results, and the ids of those calls; nil when none lacks one.
func pendingToolCalls(msgs []Message) (Message, map[string]bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		missing := map[string]bool{}
		for _, c := range m.ToolCalls {
			missing[c.ID] = true
		}
		for _, n := range msgs[i+1:] {
			if n.Role == RoleTool {
				delete(missing, n.ToolCallID)
			}
		}
		if len(missing) == 0 {
			return Message{}, nil
		}
		return m, missing
	}
	return Message{}, nil
}
