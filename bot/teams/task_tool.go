package teams

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/switchboard-chat/switchboard/tools"
)

// TaskToolOptions configures the team_tasks tool.
type TaskToolOptions struct {
	Board TaskBoard
	// TeamOf returns the team an agent belongs to (as lead or member) and
	// that team's lead; ok is false for an agent in no team.
	TeamOf func(agent string) (team, lead string, ok bool)
	// Events, when set, hears about the changes teammates must act on (the
	// bot wakes them: an assignee for a new or unblocked task, the lead for
	// a blocker or when a conversation's last open task closes).
	Events func(ctx context.Context, ev TaskEvent)
}

// The kinds of TaskEvent.
const (
	TaskEventReady   = "ready"   // created or unblocked: pending, to be claimed
	TaskEventClosed  = "closed"  // completed or cancelled
	TaskEventBlocker = "blocker" // a blocker failed it
)

// TaskEvent is one change on a team's board that teammates must act on.
type TaskEvent struct {
	Kind string
	Team string
	Task Task
	By   string // the agent that made the change
	Text string // a blocker's text
}

func (t *TaskTool) emit(ctx context.Context, ev TaskEvent) {
	if t.o.Events != nil {
		t.o.Events(ctx, ev)
	}
}

// TaskTool is the team_tasks tool: the team's task board.
type TaskTool struct{ o TaskToolOptions }

// NewTaskTool returns the team_tasks tool.
func NewTaskTool(o TaskToolOptions) *TaskTool { return &TaskTool{o} }

// Name implements tools.Tool.
func (*TaskTool) Name() string { return "team_tasks" }

// Description implements tools.Tool.
func (*TaskTool) Description() string {
	return "Your team's task board. action: create {subject, description?, priority?, blocked_by?: [ids], assignee?}, " +
		"list {status?: active|completed|all, order?: priority|newest}, get {task_id}, claim {task_id}, " +
		"complete {task_id, result}, cancel {task_id}, comment {task_id, text, type?: note|blocker — a blocker fails the task " +
		"and tells the lead}, progress {task_id, percent, text?}, search {query}."
}

// Parameters implements tools.Tool.
func (*TaskTool) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"action":{"type":"string","enum":["create","list","get","claim","complete","cancel","comment","progress","search"]},` +
		`"task_id":{"type":"integer"},"subject":{"type":"string"},"description":{"type":"string"},"priority":{"type":"integer"},` +
		`"blocked_by":{"type":"array","items":{"type":"integer"}},"assignee":{"type":"string"},"result":{"type":"string"},` +
		`"text":{"type":"string"},"type":{"type":"string","enum":["note","blocker"]},"query":{"type":"string"},` +
		`"status":{"type":"string","enum":["active","completed","all"]},"order":{"type":"string","enum":["priority","newest"]},` +
		`"percent":{"type":"integer","minimum":0,"maximum":100}},"required":["action"],"additionalProperties":false}`)
}

// SideEffect implements tools.Tool: it changes the team's shared board.
func (*TaskTool) SideEffect() tools.SideEffect { return tools.SideEffectNone }

// teamTaskArgs are the tool's arguments.
type teamTaskArgs struct {
	Action      string  `json:"action"`
	TaskID      int64   `json:"task_id"`
	Subject     string  `json:"subject"`
	Description string  `json:"description"`
	Priority    int     `json:"priority"`
	BlockedBy   []int64 `json:"blocked_by"`
	Assignee    string  `json:"assignee"`
	Result      string  `json:"result"`
	Text        string  `json:"text"`
	Type        string  `json:"type"`
	Query       string  `json:"query"`
	Status      string  `json:"status"`
	Order       string  `json:"order"`
	Percent     int     `json:"percent"`
}

// Execute implements tools.Tool.
func (t *TaskTool) Execute(ctx context.Context, raw json.RawMessage) tools.Result {
	var a teamTaskArgs
	if err := json.Unmarshal(raw, &a); err != nil || a.Action == "" {
		return tools.ErrorResult(`pass {"action": "create|list|get|claim|complete|cancel|comment|progress|search", ...}`)
	}
	call, _ := tools.CallFrom(ctx)
	team, lead, ok := t.o.TeamOf(call.Agent)
	if !ok {
		return tools.ErrorResult("you are not in a team (teams: in the config); the task board belongs to a team")
	}
	tc := taskCall{args: a, team: team, lead: lead, call: call}
	act, ok := taskActions[a.Action]
	if !ok {
		return tools.ErrorResult("unknown action " + a.Action)
	}
	if act.needsID && a.TaskID <= 0 {
		return tools.ErrorResult(`pass "task_id" (list shows the ids)`)
	}
	return act.run(t, ctx, tc)
}

// taskError turns a board error into what the model should read.
func taskError(err error) tools.Result {
	switch {
	case errors.Is(err, ErrNoTask), errors.Is(err, ErrTaskTaken), errors.Is(err, ErrNotOwner), errors.Is(err, ErrTaskClosed):
		return tools.ErrorResult(err.Error())
	case strings.Contains(err.Error(), "blocked_by"):
		return tools.ErrorResult(err.Error())
	}
	return tools.ErrorResult("the task board is unavailable right now (storage); try again later")
}

func taskLine(t Task) string {
	s := fmt.Sprintf("#%d [%s] %s (priority %d", t.ID, t.Status, t.Subject, t.Priority)
	if t.Owner != "" {
		s += ", claimed by " + t.Owner
	} else if t.Assignee != "" {
		s += ", for " + t.Assignee
	}
	if len(t.BlockedBy) > 0 {
		s += fmt.Sprintf(", after %v", t.BlockedBy)
	}
	return s + ")"
}

func taskLines(tasks []Task, empty string) string {
	if len(tasks) == 0 {
		return empty
	}
	var b strings.Builder
	for _, t := range tasks {
		b.WriteString(taskLine(t) + "\n")
	}
	return b.String()
}
