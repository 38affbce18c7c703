package jobs

import (
	"context"
	"time"
)

// SetPruneEveryForTest makes s prune its finished runs every `every`
// instead of hourly.
func (s *Scheduler) SetPruneEveryForTest(every time.Duration) { s.pruneEvery = every }

// PruneRunsNowForTest runs one prune pass of s's finished runs now.
func (s *Scheduler) PruneRunsNowForTest(ctx context.Context) (int, error) {
	return s.runsPruning(s.o.Jobs.(JobRunPruner)).Once(ctx)
}
