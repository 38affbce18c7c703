package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboard-chat/switchboard/bot/jobs"
)

var _ jobs.JobRunPruner = (*DB)(nil)

// pruneJobRunsSQL deletes, among the job runs after id $1 (the next $2 by
// id), the finished ones (succeeded, failed, skipped) whose slot is older
// than now() - $3 µs. Each job's newest run stays whatever its age, so a
// job's listing still says when it last ran (the scheduler resumes from
// jobs.last_slot, which pruning never touches). Runs still running or
// pending a retry stay too. It returns the row prunePages reads.
const pruneJobRunsSQL = `WITH page AS (
		SELECT id, job_id, scheduled_at, status FROM job_runs
		WHERE id > $1 ORDER BY id LIMIT $2
	), doomed AS (
		SELECT p.id FROM page p
		WHERE p.status IN ('succeeded', 'failed', 'skipped')
		  AND p.scheduled_at < now() - $3::float8 * interval '1 microsecond'
		  AND EXISTS (SELECT 1 FROM job_runs n WHERE n.job_id = p.job_id AND n.scheduled_at > p.scheduled_at)
	), gone AS (
		DELETE FROM job_runs r USING doomed WHERE r.id = doomed.id RETURNING r.id
	)
	SELECT (SELECT count(*) FROM gone), last.id, last.scheduled_at < now() - $3::float8 * interval '1 microsecond',
		(SELECT count(*) FROM page)
	FROM (SELECT id, scheduled_at FROM page ORDER BY id DESC LIMIT 1) last`

// PruneJobRuns deletes the finished job runs whose slot is more than keep
// ago, except each job's newest run (see pruneJobRunsSQL), walking the
// table oldest first in pages of up to limit rows until it reaches runs
// younger than keep (prunePages). It returns how many runs went; on an
// error or when ctx ends, those deleted before.
func (db *DB) PruneJobRuns(ctx context.Context, keep time.Duration, limit int) (int, error) {
	if keep <= 0 || limit <= 0 {
		return 0, fmt.Errorf("prune job runs: keep (%s) and page size (%d) must be positive", keep, limit)
	}
	return db.prunePages(ctx, "prune job runs", limit, pruneJobRunsSQL, float64(keep.Microseconds()))
}
