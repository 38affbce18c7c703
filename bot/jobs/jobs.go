package jobs

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
)

// Overlap policies: what happens to a slot while the job's previous run is
// still going.
const (
	// OverlapSkip records the slot as skipped (the default).
	OverlapSkip = "skip"
	// OverlapQueue runs the slot once the previous run ends (within the
	// catch-up window).
	OverlapQueue = "queue"
)

// Catch-up policies: what happens to slots missed while no replica ran.
const (
	// CatchUpNone drops missed slots.
	CatchUpNone = "none"
	// CatchUpLast runs the newest missed slot if it is within the catch-up
	// window (the default).
	CatchUpLast = "last"
)

// Job run statuses.
const (
	RunPending   = "pending" // waiting for a retry
	RunRunning   = "running"
	RunSucceeded = "succeeded"
	RunFailed    = "failed"
	RunSkipped   = "skipped"
)

// Job sources: where a job was defined.
const (
	JobFromConfig = "config"
	JobFromChat   = "chat"
	JobFromTool   = "tool"
)

// NoReply is the reply by which a job's agent says there is nothing to post.
const NoReply = "NO_REPLY"

// Job is an agent prompt run on a schedule, its reply posted to a chat.
type Job struct {
	ID        int64
	Name      string
	Schedule  string // see ParseSchedule
	Timezone  string // IANA name; "" is UTC
	Agent     string // "" is the default agent
	Prompt    string
	Target    channels.Address
	Enabled   bool
	Overlap   string // OverlapSkip or OverlapQueue
	CatchUp   string // CatchUpNone or CatchUpLast
	CreatedBy string // platform:user_id, "config", or the agent
	Source    string // JobFromConfig, JobFromChat or JobFromTool
	CreatedAt time.Time
	UpdatedAt time.Time
}

// JobRun is the record of one slot of a job.
type JobRun struct {
	ID          int64
	JobID       int64
	JobName     string
	ScheduledAt time.Time
	Status      string
	LeaseOwner  string
	LeaseUntil  time.Time // for RunPending: when the retry is due
	Attempts    int
	StartedAt   time.Time
	FinishedAt  time.Time
	TokensIn    int
	TokensOut   int
	Error       string
}

// RunOutcome is how a run attempt ended. Status RunPending with RetryAt
// asks for another attempt then.
type RunOutcome struct {
	Status    string
	TokensIn  int
	TokensOut int
	Error     string
	RetryAt   time.Time
}

// ErrLeaseLost is returned when a run's lease passed to another owner.
var ErrLeaseLost = errors.New("job run lease lost")

// ErrSlotBusy is returned by ClaimSlot under overlap queue while another
// run of the job is going: the slot stays unclaimed, to be tried again.
var ErrSlotBusy = errors.New("previous run of the job is still going")

// Store keeps jobs and their runs durable. Postgres implements it.
type Store interface {
	// UpsertJob creates or replaces the job named j.Name and returns it as
	// stored.
	UpsertJob(ctx context.Context, j Job) (Job, error)
	// GetJob returns the job or bot.ErrNotFound.
	GetJob(ctx context.Context, name string) (Job, error)
	// ListJobs lists all jobs by name (not those retired from the config).
	ListJobs(ctx context.Context) ([]Job, error)
	// SetJobEnabled pauses or resumes a job; bot.ErrNotFound if none.
	SetJobEnabled(ctx context.Context, name string, enabled bool) error
	// DeleteJob deletes a job and its runs; bot.ErrNotFound if none.
	DeleteJob(ctx context.Context, name string) error
	// DueClaimer claims the slots that came due, in batches.
	DueClaimer
	// ClaimSlot claims slot scheduledAt of the job for owner for lease,
	// atomically: it creates the run (unique per job and slot), or takes
	// over a run whose lease expired or whose retry is due. When another
	// run of the job is open (running, even with an expired lease, or
	// pending a retry), the slot is recorded as skipped (overlap skip) or
	// left unclaimed with ErrSlotBusy (overlap queue). claimed is false when
	// the caller must not run the slot. With beat, a claim also writes
	// owner's Heartbeat in the same statement (see bot.Liveness.Pin); a slot
	// not claimed writes none.
	ClaimSlot(ctx context.Context, jobID int64, scheduledAt time.Time, owner string, lease time.Duration, overlap string, beat bool) (run JobRun, claimed bool, err error)
	// RenewLease extends owner's lease on a running run; ErrLeaseLost when
	// owner no longer holds it.
	RenewLease(ctx context.Context, runID int64, owner string, lease time.Duration) error
	// DueRuns lists runs of enabled jobs that need an owner: running with
	// an expired lease (its replica died) or pending with a due retry.
	DueRuns(ctx context.Context, limit int) ([]JobRun, error)
	// FinishRun records the outcome of owner's attempt; ErrLeaseLost when
	// owner no longer holds the run.
	FinishRun(ctx context.Context, runID int64, owner string, out RunOutcome) error
	// FinishWithReply records owner's attempt as succeeded (with out's
	// token counts) and queues its reply in the outbox, in one statement:
	// ErrLeaseLost, and nothing queued, when owner no longer holds the run
	// (the replica that took it over delivers; the reply's session and seq
	// key an outbox row once). A reply already queued is not queued twice.
	FinishWithReply(ctx context.Context, runID int64, owner string, out RunOutcome, reply bot.OutboxMessage) error
	// RecentRuns lists the newest runs of a job, newest first.
	RecentRuns(ctx context.Context, jobID int64, limit int) ([]JobRun, error)
}

// jobNameRE is what a job name may look like: it becomes part of a session
// key and of chat commands.
var jobNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// ValidateJob fills defaults into j and checks it, returning an error that
// says what to fix.
func ValidateJob(j *Job) error {
	j.Name = strings.ToLower(strings.TrimSpace(j.Name))
	if !jobNameRE.MatchString(j.Name) {
		return fmt.Errorf("job name %q: use 1-63 lowercase letters, digits, '-' or '_'", j.Name)
	}
	if _, err := ParseSchedule(j.Schedule, j.Timezone); err != nil {
		return fmt.Errorf("job %s: %w", j.Name, err)
	}
	if strings.TrimSpace(j.Prompt) == "" {
		return fmt.Errorf("job %s: the prompt is empty; say what the agent should do", j.Name)
	}
	if j.Target.Platform == "" || j.Target.ChatID == "" {
		return fmt.Errorf("job %s: no target chat; set it as platform:chat_id[:thread_id]", j.Name)
	}
	switch j.Overlap {
	case "":
		j.Overlap = OverlapSkip
	case OverlapSkip, OverlapQueue:
	default:
		return fmt.Errorf("job %s: overlap %q: use %q or %q", j.Name, j.Overlap, OverlapSkip, OverlapQueue)
	}
	switch j.CatchUp {
	case "":
		j.CatchUp = CatchUpLast
	case CatchUpNone, CatchUpLast:
	default:
		return fmt.Errorf("job %s: catch_up %q: use %q or %q", j.Name, j.CatchUp, CatchUpNone, CatchUpLast)
	}
	return nil
}
