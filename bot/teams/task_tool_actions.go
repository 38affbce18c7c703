package teams

import (
	"context"
	"fmt"
	"strings"

	"github.com/switchboard-chat/switchboard/tools"
)

// taskCall is one team_tasks call: its arguments, the caller's team and
// that team's lead, and the call it came with.
type taskCall struct {
	args       teamTaskArgs
	team, lead string
	call       tools.Call
}

// taskAction is one of the tool's actions; needsID says it acts on one
// task, so a call without task_id is refused before it reaches the board.
type taskAction struct {
	needsID bool
	run     func(t *TaskTool, ctx context.Context, c taskCall) tools.Result
}

// taskActions are the tool's actions by name (the enum in Parameters).
var taskActions = map[string]taskAction{
	"create":   {run: (*TaskTool).create},
	"list":     {run: (*TaskTool).list},
	"search":   {run: (*TaskTool).search},
	"get":      {needsID: true, run: (*TaskTool).get},
	"claim":    {needsID: true, run: (*TaskTool).claim},
	"complete": {needsID: true, run: (*TaskTool).complete},
	"cancel":   {needsID: true, run: (*TaskTool).cancel},
	"comment":  {needsID: true, run: (*TaskTool).comment},
	"progress": {needsID: true, run: (*TaskTool).progress},
}

// create adds a task to the team's board.
func (t *TaskTool) create(ctx context.Context, c taskCall) tools.Result {
	a := c.args
	if strings.TrimSpace(a.Subject) == "" {
		return tools.ErrorResult(`pass "subject"`)
	}
	task, err := t.o.Board.CreateTask(ctx, Task{Team: c.team, Subject: strings.TrimSpace(a.Subject), Description: a.Description,
		Priority: a.Priority, BlockedBy: a.BlockedBy, Assignee: strings.TrimSpace(a.Assignee), CreatedBy: c.call.Agent,
		Origin: tools.OriginOf(c.call.Session)})
	if err != nil {
		return taskError(err)
	}
	if task.Status == TaskPending {
		// Announced when the step ends, with the other tasks the step
		// creates: a teammate cannot finish this one before they exist.
		ev := TaskEvent{Kind: TaskEventReady, Team: c.team, Task: task, By: c.call.Agent}
		tools.AtStepEnd(ctx, func(ctx context.Context) { t.emit(ctx, ev) })
	}
	return tools.Result{ForLLM: "created " + taskLine(task)}
}

// list shows the team's tasks, filtered and ordered as asked.
func (t *TaskTool) list(ctx context.Context, c taskCall) tools.Result {
	tasks, err := t.o.Board.ListTasks(ctx, c.team, TaskFilter{Status: c.args.Status, Order: c.args.Order})
	if err != nil {
		return taskError(err)
	}
	return tools.Result{ForLLM: taskLines(tasks, "no tasks")}
}

// search shows the team's tasks that match a query.
func (t *TaskTool) search(ctx context.Context, c taskCall) tools.Result {
	if strings.TrimSpace(c.args.Query) == "" {
		return tools.ErrorResult(`pass "query"`)
	}
	tasks, err := t.o.Board.SearchTasks(ctx, c.team, c.args.Query, 20)
	if err != nil {
		return taskError(err)
	}
	return tools.Result{ForLLM: taskLines(tasks, "no tasks match "+c.args.Query)}
}

// get shows one task in full, with its comments.
func (t *TaskTool) get(ctx context.Context, c taskCall) tools.Result {
	task, comments, err := t.o.Board.GetTask(ctx, c.team, c.args.TaskID)
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
	for _, cm := range comments {
		fmt.Fprintf(&b, "[%s] %s: %s\n", cm.Kind, cm.Author, cm.Text)
	}
	return tools.Result{ForLLM: b.String()}
}

// claim makes the caller a task's owner.
func (t *TaskTool) claim(ctx context.Context, c taskCall) tools.Result {
	task, err := t.o.Board.ClaimTask(ctx, c.team, c.args.TaskID, c.call.Agent)
	if err != nil {
		return taskError(err)
	}
	return tools.Result{ForLLM: "you claimed " + taskLine(task)}
}

// complete closes a task with its result and tells the teammates whose
// tasks it unblocked.
func (t *TaskTool) complete(ctx context.Context, c taskCall) tools.Result {
	task, unblocked, err := t.o.Board.CompleteTask(ctx, c.team, c.args.TaskID, c.call.Agent, c.args.Result)
	if err != nil {
		return taskError(err)
	}
	out := "completed " + taskLine(task)
	for _, u := range unblocked {
		out += "\nunblocked " + taskLine(u)
		t.emit(ctx, TaskEvent{Kind: TaskEventReady, Team: c.team, Task: u, By: c.call.Agent})
	}
	t.emit(ctx, TaskEvent{Kind: TaskEventClosed, Team: c.team, Task: task, By: c.call.Agent})
	return tools.Result{ForLLM: out}
}

// cancel closes a task without a result.
func (t *TaskTool) cancel(ctx context.Context, c taskCall) tools.Result {
	task, err := t.o.Board.CancelTask(ctx, c.team, c.args.TaskID, c.call.Agent)
	if err != nil {
		return taskError(err)
	}
	t.emit(ctx, TaskEvent{Kind: TaskEventClosed, Team: c.team, Task: task, By: c.call.Agent})
	return tools.Result{ForLLM: "cancelled " + taskLine(task)}
}

// comment adds a note to a task, or a blocker, which fails the task and
// tells the lead.
func (t *TaskTool) comment(ctx context.Context, c taskCall) tools.Result {
	kind := c.args.Type
	if kind == "" {
		kind = "note"
	}
	if (kind != "note" && kind != "blocker") || strings.TrimSpace(c.args.Text) == "" {
		return tools.ErrorResult(`pass "text" and "type": note or blocker`)
	}
	task, err := t.o.Board.CommentTask(ctx, c.team, c.args.TaskID, c.call.Agent, kind, c.args.Text)
	if err != nil {
		return taskError(err)
	}
	if kind == "blocker" {
		t.emit(ctx, TaskEvent{Kind: TaskEventBlocker, Team: c.team, Task: task, By: c.call.Agent, Text: c.args.Text})
		return tools.Result{ForLLM: "reported the blocker; the task failed and the lead (" + c.lead + ") is told: " + taskLine(task)}
	}
	return tools.Result{ForLLM: "noted on " + taskLine(task)}
}

// progress records how far the caller is with a task.
func (t *TaskTool) progress(ctx context.Context, c taskCall) tools.Result {
	task, err := t.o.Board.ProgressTask(ctx, c.team, c.args.TaskID, c.call.Agent, c.args.Percent, c.args.Text)
	if err != nil {
		return taskError(err)
	}
	return tools.Result{ForLLM: fmt.Sprintf("progress %d%% on %s", task.Progress, taskLine(task))}
}
