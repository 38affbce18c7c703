package teams

import (
	"context"
	"errors"
	"time"
)

// The states of a team task.
const (
	TaskPending    = "pending"     // ready to be claimed
	TaskBlocked    = "blocked"     // waits for the tasks in BlockedBy
	TaskInProgress = "in_progress" // claimed by Owner
	TaskCompleted  = "completed"
	TaskCancelled  = "cancelled"
	TaskFailed     = "failed" // a blocker was reported
)

// Task is one entry of a team's task board.
type Task struct {
	ID           int64
	Team         string
	Subject      string
	Description  string
	Priority     int
	Status       string
	BlockedBy    []int64
	Assignee     string // the agent meant to do it ("" : anyone)
	Owner        string // the agent that claimed it
	CreatedBy    string
	Result       string
	Progress     int // percent
	ProgressNote string
	// Origin is the conversation (chat address) the task was created for:
	// its lead hears the outcome there.
	Origin    string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// TaskComment is a note or a blocker on a task.
type TaskComment struct {
	Author, Kind, Text string // Kind: note | blocker
	At                 time.Time
}

// TaskFilter selects tasks for List.
type TaskFilter struct {
	Status string // active (default: not completed/cancelled/failed), completed, all
	Order  string // priority (default) or newest
	Limit  int
}

// Errors of the task board.
var (
	ErrNoTask     = errors.New("no such task")
	ErrTaskTaken  = errors.New("the task is not open for claiming (someone claimed it, or it is blocked or done)")
	ErrNotOwner   = errors.New("only the agent that claimed the task can do that")
	ErrTaskClosed = errors.New("the task is already completed, cancelled or failed")
)

// TaskBoard is a team's durable task board (Postgres implements it). Every
// change is audited; Claim is race-safe: of concurrent claimers exactly one
// wins.
type TaskBoard interface {
	CreateTask(ctx context.Context, t Task) (Task, error)
	GetTask(ctx context.Context, team string, id int64) (Task, []TaskComment, error)
	ListTasks(ctx context.Context, team string, f TaskFilter) ([]Task, error)
	ClaimTask(ctx context.Context, team string, id int64, agent string) (Task, error)
	// CompleteTask finishes a claimed task and returns the tasks it
	// unblocked (now pending).
	CompleteTask(ctx context.Context, team string, id int64, agent, result string) (Task, []Task, error)
	CancelTask(ctx context.Context, team string, id int64, by string) (Task, error)
	// CommentTask adds a note, or a blocker, which fails the task.
	CommentTask(ctx context.Context, team string, id int64, by, kind, text string) (Task, error)
	ProgressTask(ctx context.Context, team string, id int64, agent string, percent int, note string) (Task, error)
	SearchTasks(ctx context.Context, team, query string, limit int) ([]Task, error)
}
