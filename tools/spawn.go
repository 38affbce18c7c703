package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Subagent is one child run of an agent: a copy of the agent with fewer
// tools, working on one task in its own session.
type Subagent struct {
	ID       string    `json:"id"`
	Parent   string    `json:"parent"` // the spawning session
	Label    string    `json:"label"`
	Task     string    `json:"task"`
	Status   string    `json:"status"` // running | completed | failed | cancelled
	Result   string    `json:"result,omitempty"`
	Sync     bool      `json:"sync,omitempty"` // the parent waits for it (run)
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished,omitzero"`
}

// The states of a Subagent.
const (
	SubRunning   = "running"
	SubCompleted = "completed"
	SubFailed    = "failed"
	SubCancelled = "cancelled"
)

// ErrSubagentLimit is wrapped by Spawner.Spawn when a limit refuses the
// spawn; its message says which limit and what to do.
var ErrSubagentLimit = errors.New("subagent limit")

// Spawner runs subagents for the spawn tool (the bot implements it).
type Spawner interface {
	// Spawn starts a subagent of call's session on task. With wait it
	// returns when the subagent is done (its Result filled in); without,
	// at once, and the result is announced to the session later.
	Spawn(ctx context.Context, call Call, task, label string, wait bool) (Subagent, error)
	// Subagents lists the subagents of call's session, newest first.
	Subagents(ctx context.Context, call Call) ([]Subagent, error)
	// CancelSubagents stops running subagents of call's session: one by
	// id, "all", or "last" (the newest); it returns those it stopped.
	CancelSubagents(ctx context.Context, call Call, which string) ([]Subagent, error)
}

// Spawn is the spawn tool.
type Spawn struct{ S Spawner }

// steerSettle is how long steer waits between stopping a subagent and
// starting its replacement, so the stopped run's last steps settle.
const steerSettle = 500 * time.Millisecond

// Name implements Tool.
func (*Spawn) Name() string { return "spawn" }

// Description implements Tool.
func (*Spawn) Description() string {
	return "Subagents: copies of you with fewer tools that work on one task in their own session. action: spawn {task, label?} " +
		"starts one in the background (its result comes to you as a message when done), run {task, label?} waits for the result, " +
		"list, cancel {id: an id | all | last}, steer {id, task} stops one and starts it again on a new task."
}

// Parameters implements Tool.
func (*Spawn) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"action":{"type":"string","enum":["spawn","run","list","cancel","steer"]},` +
		`"task":{"type":"string"},"label":{"type":"string"},"id":{"type":"string"}},` +
		`"required":["action"],"additionalProperties":false}`)
}

// SideEffect implements Tool: a subagent's own tool calls are gated one by
// one, like the parent's.
func (*Spawn) SideEffect() SideEffect { return SideEffectNone }

// maxSubagentTask bounds a task's text.
const maxSubagentTask = 8000

// spawnArgs are the tool's arguments.
type spawnArgs struct{ Action, Task, Label, ID string }

// Execute implements Tool.
func (s *Spawn) Execute(ctx context.Context, raw json.RawMessage) Result {
	var a spawnArgs
	if err := json.Unmarshal(raw, &a); err != nil || a.Action == "" {
		return ErrorResult(`pass {"action": "spawn|run|list|cancel|steer", ...}`)
	}
	call, _ := CallFrom(ctx)
	switch a.Action {
	case "spawn", "run":
		return s.spawn(ctx, call, a)
	case "list":
		return s.list(ctx, call)
	case "cancel":
		return s.cancel(ctx, call, a)
	case "steer":
		return s.steer(ctx, call, a)
	}
	return ErrorResult("unknown action " + a.Action)
}

// badSubagentTask says what is wrong with a subagent's task text, if
// anything.
func badSubagentTask(task string) (Result, bool) {
	if strings.TrimSpace(task) == "" {
		return ErrorResult(`pass "task": what the subagent should do, with everything it needs to know`), true
	}
	if len(task) > maxSubagentTask {
		return ErrorResult(fmt.Sprintf("task is %d bytes; at most %d", len(task), maxSubagentTask)), true
	}
	return Result{}, false
}

// spawn starts a subagent on a task: in the background for "spawn", or
// waiting for its result for "run".
func (s *Spawn) spawn(ctx context.Context, call Call, a spawnArgs) Result {
	if r, bad := badSubagentTask(a.Task); bad {
		return r
	}
	sub, err := s.S.Spawn(ctx, call, a.Task, a.Label, a.Action == "run")
	if err != nil {
		return spawnError(err)
	}
	if a.Action == "spawn" {
		return Result{ForLLM: fmt.Sprintf("spawned subagent %s (%s); its result comes to you as a message when it is done", sub.ID, sub.Label)}
	}
	return Result{ForLLM: fmt.Sprintf("subagent %s %s: %s", sub.ID, sub.Status, sub.Result), IsError: sub.Status != SubCompleted}
}

// list shows the caller's subagents.
func (s *Spawn) list(ctx context.Context, call Call) Result {
	subs, err := s.S.Subagents(ctx, call)
	if err != nil {
		return spawnError(err)
	}
	if len(subs) == 0 {
		return Result{ForLLM: "no subagents"}
	}
	var b strings.Builder
	for _, x := range subs {
		fmt.Fprintf(&b, "%s [%s] %s — started %s", x.ID, x.Status, x.Label, x.Started.UTC().Format(time.RFC3339))
		if x.Result != "" {
			b.WriteString(": " + oneLine(x.Result, 200))
		}
		b.WriteString("\n")
	}
	return Result{ForLLM: b.String()}
}

// cancel stops the running subagents a.ID matches.
func (s *Spawn) cancel(ctx context.Context, call Call, a spawnArgs) Result {
	if a.ID == "" {
		return ErrorResult(`pass "id": a subagent id, "all" or "last"`)
	}
	done, err := s.S.CancelSubagents(ctx, call, a.ID)
	if err != nil {
		return spawnError(err)
	}
	if len(done) == 0 {
		return Result{ForLLM: "no running subagent matched " + a.ID}
	}
	ids := make([]string, 0, len(done))
	for _, x := range done {
		ids = append(ids, x.ID)
	}
	return Result{ForLLM: "cancelled " + strings.Join(ids, ", ")}
}

// steer stops one running subagent and starts it again, in the background,
// on a new task.
func (s *Spawn) steer(ctx context.Context, call Call, a spawnArgs) Result {
	if a.ID == "" || a.ID == "all" {
		return ErrorResult(`pass "id" of the subagent to steer (or "last") and its new "task"`)
	}
	if r, bad := badSubagentTask(a.Task); bad {
		return r
	}
	done, err := s.S.CancelSubagents(ctx, call, a.ID)
	if err != nil {
		return spawnError(err)
	}
	if len(done) == 0 {
		return ErrorResult("no running subagent matched " + a.ID + "; spawn a new one instead")
	}
	select {
	case <-ctx.Done():
		return ErrorResult("stopped")
	case <-time.After(steerSettle):
	}
	label := a.Label
	if label == "" {
		label = done[0].Label
	}
	sub, err := s.S.Spawn(ctx, call, a.Task, label, false)
	if err != nil {
		return spawnError(err)
	}
	return Result{ForLLM: fmt.Sprintf("stopped %s and spawned %s (%s) on the new task", done[0].ID, sub.ID, sub.Label)}
}

// spawnError turns a Spawner error into something the model can act on.
func spawnError(err error) Result {
	if errors.Is(err, ErrSubagentLimit) {
		return ErrorResult(err.Error())
	}
	return ErrorResult("subagents are unavailable right now (" + err.Error() + "); do the work yourself or try later")
}
