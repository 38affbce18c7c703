package agentcore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"go.opentelemetry.io/otel/trace"
	"log/slog"
	"slices"
	"strings"
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
	// Context, when set, returns text appended to the system prompt (the
	// agent's context files). It is read at the start of every run, so a
	// file written in one run shapes the next; an error only logs.
	Context func(ctx context.Context, call tools.Call) (string, error)
	// Gate, when set, decides each call before it runs (side-effect class
	// approvals); a call it stops gets its result instead.
	Gate   func(ctx context.Context, call tools.Call, t tools.Tool, args json.RawMessage) (tools.Result, bool)
	Logger *slog.Logger
	// ObserveLLM, if set, is told the duration and outcome of each LLM call.
	ObserveLLM func(took time.Duration, err error)
	// Queue says how messages that arrive during a run are taken in
	// (conversation.queue); "" is QueueSteer.
	Queue QueueMode
	// Tracer, when set, traces each model call and each tool call as
	// children of the run's span.
	Tracer trace.Tracer
	// Vision says the model reads images (llm.vision, agents[].vision):
	// the pictures of user messages reach it as image input, loaded
	// through Images for each model call. Without it they are not sent.
	Vision bool
	// Images loads those pictures; with Vision and no Images, the model
	// is told each picture could not be read.
	Images ImageLoader
	// Meter, when set, checks budgets before each model call and records
	// each call's usage.
	Meter Meter
	// ContextTokens is the token budget of each model call
	// (agent.context_tokens): the system prompt, the tool schemas, the
	// summary and the history, estimated as tokens.go says. The oldest
	// turns that do not fit are left out. 0 sets no budget.
	ContextTokens int
	// Compactor, when set, summarizes the turns the window leaves out
	// (agent.compaction) and the summary is sent in their place; without
	// it they are only left out.
	Compactor *Compactor
}

// RunInput is what a run needs to know.
type RunInput struct {
	Session string     // session key (SessionKey.String())
	Call    tools.Call // where the conversation is; passed to tools
	// User is the new user message, or nil to continue the session as stored
	// (after a restart, or when the message was appended already).
	User *Message
	// OnText, when set, receives the text of the model's current reply so
	// far each time it grows (see Provider.Chat); each model call of the
	// run, and each retry of one, starts again from its first words.
	OnText func(soFar string)
	// OnReply, when set, is called with each final reply as soon as it is
	// stored. A run that finds messages which arrived while it worked goes
	// on with them, so one run can produce several replies.
	OnReply func(ctx context.Context, r Reply)
	// StoreReply, when set, stores each final reply instead of
	// History.Insert, with the same contract, so the caller can store what
	// delivers the reply in the same transaction. OnReply is called after.
	StoreReply func(ctx context.Context, after int64, reply Message) (seq int64, moved int, err error)
	// OnStep, when set, is told about each tool call just before it runs
	// (progress display: "working… exec ls -la").
	OnStep func(c ToolCall)
	// Allow, when set, narrows the agent's tools for this run (a
	// subagent's deny lists): a tool is offered and callable only when
	// both AllowTool and Allow accept it.
	Allow func(tools.Tool) bool
	// MaxIterations, when positive, bounds this run's loop instead of the
	// agent's MaxIterations.
	MaxIterations int
	// Model, when set, is the model this run asks instead of the agent's
	// (a chat switched with /model).
	Model *ModelChoice
}

// ModelChoice is a model a run uses instead of its agent's: the provider
// that reaches it, its id there, and whether it reads images.
type ModelChoice struct {
	Provider Provider
	Model    string
	Vision   bool
}

// Reply is one final answer of a run, stored at Seq in the session.
type Reply struct {
	Text string
	Seq  int64
}

// RunResult is the outcome of a run.
type RunResult struct {
	Text       string // the last final reply; empty when there was none
	Seq        int64  // sequence number of that reply in the session
	Replies    int    // final replies this run produced (each went to OnReply)
	Iterations int
	Usage      Usage
	// Model is the model that answered the run's last model call: the
	// agent's, or a fallback's (llm.fallbacks).
	Model string
	// Idle is true when the session needed no run: every user message was
	// answered already and no step was left unfinished.
	Idle bool
	// Waiting is set when the run parked: a tool call waits for a human
	// (an approval). Nothing holds the session meanwhile; the decision
	// resumes it with another Run.
	Waiting *tools.Waiting
}

// Run drives the conversation of one session until every user message in
// it is answered (see view for the queue modes), a tool call parks the run,
// or ctx ends. Every step is stored as it happens, right after the messages
// the model was shown, so the stored order is the order the model saw, and
// a run interrupted at any point continues where it left off when Run is
// called again for the session with User nil.
func (a *Agent) Run(ctx context.Context, in RunInput) (RunResult, error) {
	if m := in.Model; m != nil && m.Provider != nil {
		chosen := *a
		chosen.Provider, chosen.Model, chosen.Vision = m.Provider, m.Model, m.Vision
		a = &chosen
	}
	log := a.logger().With("agent", a.Name, "session", in.Session)
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		log = log.With("trace_id", sc.TraceID().String())
	}
	if in.User != nil {
		u := *in.User
		u.Role = RoleUser
		if _, err := a.History.Append(ctx, in.Session, u); err != nil {
			return RunResult{}, fmt.Errorf("record user message: %w", err)
		}
	}
	r := &runLoop{
		a: a, in: in, log: log, maxIter: a.maxIterations(in),
		specs:  a.Tools.Specs(func(t tools.Tool) bool { return a.allows(in, t) }),
		system: a.systemPrompt(ctx, log, in),
	}
	for {
		if done, err := r.step(ctx); done {
			return r.res, err
		}
	}
}

// maxIterations is how many model calls one turn of this run may make.
func (a *Agent) maxIterations(in RunInput) int {
	maxIter := a.MaxIterations
	if in.MaxIterations > 0 {
		maxIter = in.MaxIterations
	}
	if maxIter <= 0 {
		maxIter = DefaultMaxIterations
	}
	return maxIter
}

// windowed is a session's history window and what it leaves out.
type windowed struct {
	msgs    []Message
	summary Summary // the session's summary; zero without compaction
	// older is true when messages before msgs are neither in the window
	// nor in the summary.
	older bool
}

// window loads the session's newest messages (HistoryLimit, let go in
// steps: steppedWindow) after those its summary covers, starting at a
// user message so no window begins with orphaned tool results.
func (a *Agent) window(ctx context.Context, session string) (windowed, error) {
	var w windowed
	if a.Compactor != nil {
		s, err := a.Compactor.Store.Summary(ctx, session)
		if err != nil {
			// The history is whole without it: send that, summarize later.
			a.logger().Warn("session summary unavailable; sending the history without it", "session", session, "err", err)
		}
		w.summary = s
	}
	msgs, err := a.History.Load(ctx, session, a.HistoryLimit)
	if err != nil {
		return w, fmt.Errorf("load history: %w", err)
	}
	full := a.HistoryLimit > 0 && len(msgs) >= a.HistoryLimit
	if s := steppedWindow(msgs, a.HistoryLimit); len(trimToUserTurn(s)) > 0 {
		msgs = s
	}
	if t := trimToUserTurn(msgs); len(t) == 0 && len(msgs) > 0 && a.HistoryLimit > 0 {
		// The window holds only one long tool sequence: widen it.
		if msgs, err = a.History.Load(ctx, session, 0); err != nil {
			return w, fmt.Errorf("load history: %w", err)
		}
	}
	msgs = slices.DeleteFunc(msgs, func(m Message) bool { return m.Seq <= w.summary.ToSeq })
	w.msgs = trimToUserTurn(orderToolResults(msgs))
	// Only a full window can leave older turns out: trimToUserTurn drops
	// no user message, only what precedes the session's first one.
	w.older = full && len(w.msgs) > 0 && w.msgs[0].Seq > w.summary.covered()+1
	return w, nil
}

// storeReply stores a final reply through in.StoreReply or History.Insert.
func (a *Agent) storeReply(ctx context.Context, in RunInput, after int64, reply Message) (int64, int, error) {
	if in.StoreReply != nil {
		return in.StoreReply(ctx, after, reply)
	}
	return a.History.Insert(ctx, in.Session, after, reply)
}

// reply records a final reply in res and hands it to OnReply.
func (a *Agent) reply(ctx context.Context, in RunInput, res *RunResult, text string, seq int64) {
	res.Text, res.Seq = text, seq
	res.Replies++
	if in.OnReply != nil {
		in.OnReply(ctx, Reply{Text: text, Seq: seq})
	}
}

// withServerIDs gives every tool call an id of our own. Model servers reuse
// ids (several number the calls of each reply call_0, call_1…), and an id
// names the call in the session, in its result and in its approval: a
// reused id must never find an earlier call's result or decision.
func withServerIDs(calls []ToolCall) []ToolCall {
	if len(calls) == 0 {
		return nil
	}
	out := make([]ToolCall, len(calls))
	for i, c := range calls {
		var b [9]byte
		_, _ = rand.Read(b[:])
		c.ID = "call_" + hex.EncodeToString(b[:])
		out[i] = c
	}
	return out
}

// runTools executes calls (only those in want, when want is non-nil) in
// order and stores each result right after the previous step (after). It
// stops at a call that waits for a human and returns what it waits for.
// Effects the calls deferred with tools.AtStepEnd run as it returns.
func (a *Agent) runTools(ctx context.Context, in RunInput, calls []ToolCall, want map[string]bool, after int64) (*tools.Waiting, error) {
	ctx, stepEnd := tools.WithStepEnd(ctx)
	// The step's deferred effects (tools.AtStepEnd) run even when the run
	// is cut short: what they announce was done.
	defer stepEnd(context.WithoutCancel(ctx))
	for _, c := range calls {
		if want != nil && !want[c.ID] {
			continue
		}
		if in.OnStep != nil {
			in.OnStep(c)
		}
		call := in.Call
		if call.Session == "" {
			call.Session = in.Session
		}
		res := a.executeTraced(ctx, in, call, c)
		if res.Waiting != nil {
			return res.Waiting, nil
		}
		msg := Message{Role: RoleTool, ToolCallID: c.ID, ToolName: c.Name, Content: res.ForLLM, IsError: res.IsError}
		seq, _, err := a.History.Insert(ctx, in.Session, after, msg)
		if err != nil {
			return nil, fmt.Errorf("record tool result: %w", err)
		}
		after = seq
	}
	return nil, nil
}

// allows reports whether the run in may use t.
func (a *Agent) allows(in RunInput, t tools.Tool) bool {
	return (a.AllowTool == nil || a.AllowTool(t)) && (in.Allow == nil || in.Allow(t))
}

func (a *Agent) execute(ctx context.Context, in RunInput, call tools.Call, c ToolCall) tools.Result {
	t, ok := a.Tools.Get(c.Name)
	if !ok || !a.allows(in, t) {
		return tools.ErrorResult(fmt.Sprintf("tool %q is not available to you", c.Name))
	}
	args := c.Arguments
	if len(args) > 0 && !isJSONObject(args) {
		return tools.ErrorResult("arguments are not valid JSON; send a JSON object matching the tool's schema")
	}
	call.Agent = a.Name
	call.ToolCallID = c.ID
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if a.Gate != nil {
		if res, ok := a.Gate(ctx, call, t, args); !ok {
			return res
		}
	}
	return a.Tools.Execute(ctx, call, c.Name, args)
}

// isJSONObject reports whether b is one JSON object (providers pass
// malformed arguments through as a JSON string).
func isJSONObject(b json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(b, &m) == nil && m != nil
}

// systemPrompt is the agent's prompt plus what Context adds for the run.
func (a *Agent) systemPrompt(ctx context.Context, log *slog.Logger, in RunInput) string {
	if a.Context == nil {
		return a.SystemPrompt
	}
	call := in.Call
	if call.Session == "" {
		call.Session = in.Session
	}
	call.Agent = a.Name
	extra, err := a.Context(ctx, call)
	if err != nil {
		log.Warn("context files unavailable; running with the base prompt", "err", err)
		return a.SystemPrompt
	}
	if strings.TrimSpace(extra) == "" {
		return a.SystemPrompt
	}
	return a.SystemPrompt + "\n\n" + extra
}

func (a *Agent) logger() *slog.Logger {
	if a.Logger != nil {
		return a.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// trimToUserTurn drops leading messages until the first user message, so a
// history window never starts with orphaned tool results. Notes among the
// dropped messages are kept: they are context, not turns, and the one a
// handoff leaves comes before the receiving session's first user message.
func trimToUserTurn(msgs []Message) []Message {
	for i, m := range msgs {
		if m.Role != RoleUser {
			continue
		}
		if !slices.ContainsFunc(msgs[:i], Message.IsNote) {
			return msgs[i:]
		}
		out := make([]Message, 0, len(msgs))
		for _, n := range msgs[:i] {
			if n.IsNote() {
				out = append(out, n)
			}
		}
		return append(out, msgs[i:]...)
	}
	return nil
}

// orderToolResults returns msgs with every tool result right after the
// assistant message that asked for it. People may write while a run waits
// on a tool (an approval, say); their messages are stored as they arrive,
// between the call and its result, but providers require the results to
// follow the call, so such messages move after the results.
func orderToolResults(msgs []Message) []Message {
	if !slices.ContainsFunc(msgs, func(m Message) bool { return m.Role == RoleAssistant && len(m.ToolCalls) > 0 }) {
		return msgs // no tool calls: nothing to move, and no copy per run
	}
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

// pendingStep finds the newest assistant message whose tool calls lack
// results, the ids of those calls, and the seq after which their results
// go (the call's, or its last stored result's); missing is nil when no call
// lacks a result.
func pendingStep(msgs []Message) (step Message, missing map[string]bool, after int64) {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		missing = map[string]bool{}
		for _, c := range m.ToolCalls {
			missing[c.ID] = true
		}
		after = m.Seq
		for _, n := range msgs[i+1:] {
			if n.Role == RoleTool && missing[n.ToolCallID] {
				delete(missing, n.ToolCallID)
				after = max(after, n.Seq)
			}
		}
		if len(missing) == 0 {
			return Message{}, nil, 0
		}
		return m, missing, after
	}
	return Message{}, nil, 0
}
