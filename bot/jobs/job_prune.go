package jobs

import (
	"context"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
)

// JobRunPruner is an optional Store capability: deleting finished job
// runs long past, so job_runs holds about SchedulerOptions.KeepRuns of
// history instead of growing by a row per slot forever.
type JobRunPruner interface {
	// PruneJobRuns deletes the finished runs whose slot is more than keep
	// ago, except each job's newest run (so a job's listing still says
	// when it last ran), working in statements of up to limit rows; it
	// returns how many runs went.
	PruneJobRuns(ctx context.Context, keep time.Duration, limit int) (int, error)
}

// DefaultJobRunKeep is how long finished job runs are kept by default.
const DefaultJobRunKeep = 30 * 24 * time.Hour

// jobRunsPruneLock is the leadership of the replica that prunes job runs.
const jobRunsPruneLock = "jobs:prune"

// runsPruning is the hourly pass that prunes p.
func (s *Scheduler) runsPruning(p JobRunPruner) bot.Pruning {
	return bot.Pruning{What: "job runs", Lock: jobRunsPruneLock, Keep: s.o.KeepRuns, Every: s.pruneEvery,
		Store: p, Prune: p.PruneJobRuns, Log: s.log}
}
