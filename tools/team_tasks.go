package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// TeamTasksOptions configures the team_tasks tool.
type TeamTasksOptions struct {
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

func (t *TeamTasks) emit(ctx context.Context, ev TaskEvent) {
	if t.o.Events != nil {
		t.o.Events(ctx, ev)
	}
}

// TeamTasks is the team_tasks tool: the team's task board.
type TeamTasks struct{ o TeamTasksOptions }

// NewTeamTasks returns the team_tasks tool.
func NewTeamTasks(o TeamTasksOptions) *TeamTasks { return &TeamTasks{o} }

// Name implements Tool.
func (*TeamTasks) Name() string { return "team_tasks" }

// Description implements Tool.
func (*TeamTasks) Description() string {
	return "Your team's task board. action: create {subject, description?, priority?, blocked_by?: [ids], assignee?}, " +
		"list {status?: active|completed|all, order?: priority|newest}, get {task_id}, claim {task_id}, " +
		"complete {task_id, result}, cancel {task_id}, comment {task_id, text, type?: note|blocker — a blocker fails the task " +
		"and tells the lead}, progress {task_id, percent, text?}, search {query}."
}

// Parameters implements Tool.
func (*TeamTasks) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"action":{"type":"string","enum":["create","list","get","claim","complete","cancel","comment","progress","search"]},` +
		`"task_id":{"type":"integer"},"subject":{"type":"string"},"description":{"type":"string"},"priority":{"type":"integer"},` +
		`"blocked_by":{"type":"array","items":{"type":"integer"}},"assignee":{"type":"string"},"result":{"type":"string"},` +
		`"text":{"type":"string"},"type":{"type":"string","enum":["note","blocker"]},"query":{"type":"string"},` +
		`"status":{"type":"string","enum":["active","completed","all"]},"order":{"type":"string","enum":["priority","newest"]},` +
		`"percent":{"type":"integer","minimum":0,"maximum":100}},"required":["action"],"additionalProperties":false}`)
}

// SideEffect implements Tool: it changes the team's shared board.
func (*TeamTasks) SideEffect() SideEffect { return SideEffectNone }

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

// Execute implements Tool.
func (t *TeamTasks) Execute(ctx context.Context, raw json.RawMessage) Result {
	var a teamTaskArgs
	if err := json.Unmarshal(raw, &a); err != nil || a.Action == "" {
		return ErrorResult(`pass {"action": "create|list|get|claim|complete|cancel|comment|progress|search", ...}`)
	}
	call, _ := CallFrom(ctx)
	team, lead, ok := t.o.TeamOf(call.Agent)
	if !ok {
		return ErrorResult("you are not in a team (teams: in the config); the task board belongs to a team")
	}
	needID := func() *Result {
		if a.TaskID <= 0 {
			r := ErrorResult(`pass "task_id" (list shows the ids)`)
			return &r
		}
		return nil
	}
	var (
		task Task
		err  error
	)
	switch a.Action {
	case "create":
		if strings.TrimSpace(a.Subject) == "" {
			return ErrorResult(`pass "subject"`)
		}
		task, err = t.o.Board.CreateTask(ctx, Task{Team: team, Subject: strings.TrimSpace(a.Subject), Description: a.Description,
			Priority: a.Priority, BlockedBy: a.BlockedBy, Assignee: strings.TrimSpace(a.Assignee), CreatedBy: call.Agent,
			Origin: OriginOf(call.Session)})
		if err == nil {
			if task.Status == TaskPending {
				// Announced when the step ends, with the other tasks the
				// step creates: a teammate cannot finish this one before
				// they exist.
				ev := TaskEvent{Kind: TaskEventReady, Team: team, Task: task, By: call.Agent}
				AtStepEnd(ctx, func(ctx context.Context) { t.emit(ctx, ev) })
			}
			return Result{ForLLM: "created " + taskLine(task)}
		}
	case "list":
		tasks, err := t.o.Board.ListTasks(ctx, team, TaskFilter{Status: a.Status, Order: a.Order})
		if err != nil {
			return taskError(err)
		}
		return Result{ForLLM: taskLines(tasks, "no tasks")}
	case "search":
		if strings.TrimSpace(a.Query) == "" {
			return ErrorResult(`pass "query"`)
		}
		tasks, err := t.o.Board.SearchTasks(ctx, team, a.Query, 20)
		if err != nil {
			return taskError(err)
		}
		return Result{ForLLM: taskLines(tasks, "no tasks match "+a.Query)}
	case "get":
		if r := needID(); r != nil {
			return *r
		}
		task, comments, err := t.o.Board.GetTask(ctx, team, a.TaskID)
		if err != nil {
			return taskError(err)
		}
		var b strings.Builder
		b.WriteString(taskLine(task) + "\n")
		if task.Description != "" {
			b.WriteString(task.Description + "\n")
		}
		if task.Result != "" {
			b.WriteString("Result: " + task.Result + "\n")
		}
		if task.ProgressNote != "" {
			fmt.Fprintf(&b, "Progress: %d%% — %s\n", task.Progress, task.ProgressNote)
		}
		for _, c := range comments {
			fmt.Fprintf(&b, "[%s] %s: %s\n", c.Kind, c.Author, c.Text)
		}
		return Result{ForLLM: b.String()}
	case "claim":
		if r := needID(); r != nil {
			return *r
		}
		task, err = t.o.Board.ClaimTask(ctx, team, a.TaskID, call.Agent)
		if err == nil {
			return Result{ForLLM: "you claimed " + taskLine(task)}
		}
	case "complete":
		if r := needID(); r != nil {
			return *r
		}
		var unblocked []Task
		task, unblocked, err = t.o.Board.CompleteTask(ctx, team, a.TaskID, call.Agent, a.Result)
		if err == nil {
			out := "completed " + taskLine(task)
			for _, u := range unblocked {
				out += "\nunblocked " + taskLine(u)
				t.emit(ctx, TaskEvent{Kind: TaskEventReady, Team: team, Task: u, By: call.Agent})
			}
			t.emit(ctx, TaskEvent{Kind: TaskEventClosed, Team: team, Task: task, By: call.Agent})
			return Result{ForLLM: out}
		}
	case "cancel":
		if r := needID(); r != nil {
			return *r
		}
		task, err = t.o.Board.CancelTask(ctx, team, a.TaskID, call.Agent)
		if err == nil {
			t.emit(ctx, TaskEvent{Kind: TaskEventClosed, Team: team, Task: task, By: call.Agent})
			return Result{ForLLM: "cancelled " + taskLine(task)}
		}
	case "comment":
		if r := needID(); r != nil {
			return *r
		}
		kind := a.Type
		if kind == "" {
			kind = "note"
		}
		if (kind != "note" && kind != "blocker") || strings.TrimSpace(a.Text) == "" {
			return ErrorResult(`pass "text" and "type": note or blocker`)
		}
		task, err = t.o.Board.CommentTask(ctx, team, a.TaskID, call.Agent, kind, a.Text)
		if err == nil {
			if kind == "blocker" {
				t.emit(ctx, TaskEvent{Kind: TaskEventBlocker, Team: team, Task: task, By: call.Agent, Text: a.Text})
				return Result{ForLLM: "reported the blocker; the task failed and the lead (" + lead + ") is told: " + taskLine(task)}
			}
			return Result{ForLLM: "noted on " + taskLine(task)}
		}
	case "progress":
		if r := needID(); r != nil {
			return *r
		}
		task, err = t.o.Board.ProgressTask(ctx, team, a.TaskID, call.Agent, a.Percent, a.Text)
		if err == nil {
			return Result{ForLLM: fmt.Sprintf("progress %d%% on %s", task.Progress, taskLine(task))}
		}
	default:
		return ErrorResult("unknown action " + a.Action)
	}
	return taskError(err)
}

// taskError turns a board error into what the model should read.
func taskError(err error) Result {
	switch {
	case errors.Is(err, ErrNoTask), errors.Is(err, ErrTaskTaken), errors.Is(err, ErrNotOwner), errors.Is(err, ErrTaskClosed):
		return ErrorResult(err.Error())
	case strings.Contains(err.Error(), "blocked_by"):
		return ErrorResult(err.Error())
	}
	return ErrorResult("the task board is unavailable right now (storage); try again later")
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
