package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/bot/jobs"
)

// jobOpen is true for a job j that has an open run (running, even with an
// expired lease, or pending a retry); the unique (job_id, scheduled_at)
// index finds it.
const jobOpen = `EXISTS (SELECT 1 FROM job_runs o WHERE o.job_id = j.id AND o.status IN ('running', 'pending'))`

// claimDueQuery locks a batch of due jobs (jobs_due_idx), skipping those
// another replica has locked, and queued jobs still waiting for a run.
const claimDueQuery = `SELECT ` + jobColsJ + `, j.last_slot, ` + jobOpen + `
	FROM jobs j
	WHERE j.enabled AND j.retired_at IS NULL AND j.next_due <= $1
		AND NOT (j.overlap = 'queue' AND ` + jobOpen + `)
	ORDER BY j.next_due LIMIT $2
	FOR UPDATE OF j SKIP LOCKED`

// ClaimDue locks up to o.Limit due jobs with FOR UPDATE SKIP LOCKED, plans
// each with plan, and in the same transaction inserts the planned runs
// (unique per job and slot: a slot already on record is not claimed again)
// and moves each job's last_slot and next_due. With o.Beat, the statement
// that claims runs also writes o.Owner's heartbeat when it claims any.
func (db *DB) ClaimDue(ctx context.Context, o jobs.ClaimDueOptions, plan func(jobs.DueJob) jobs.SlotPlan) ([]jobs.ClaimedRun, int, error) {
	wrap := func(err error) error { return fmt.Errorf("claim due job slots: %w", err) }
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return nil, 0, wrap(err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	rows, err := tx.Query(ctx, claimDueQuery, o.Now, o.Limit)
	if err != nil {
		return nil, 0, wrap(err)
	}
	due, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (jobs.DueJob, error) {
		var d jobs.DueJob
		err := row.Scan(append(jobDest(&d.Job), &d.LastSlot, &d.Busy)...)
		return d, err
	})
	if err != nil {
		return nil, 0, wrap(err)
	}
	if len(due) == 0 {
		return nil, 0, nil
	}
	var (
		claimJob, skipJob, moveJob []int64
		claimAt, skipAt, handled   []time.Time
		next                       []*time.Time
	)
	byID := make(map[int64]jobs.Job, len(due))
	for _, d := range due {
		byID[d.ID] = d.Job
		p := plan(d)
		for _, t := range p.Claim {
			claimJob, claimAt = append(claimJob, d.ID), append(claimAt, t)
		}
		for _, t := range p.Skip {
			skipJob, skipAt = append(skipJob, d.ID), append(skipAt, t)
		}
		var n *time.Time
		if !p.Next.IsZero() {
			n = &p.Next
		}
		moveJob, handled, next = append(moveJob, d.ID), append(handled, p.Handled), append(next, n)
	}
	if _, err := tx.Exec(ctx, `UPDATE jobs j SET last_slot = u.handled, next_due = u.next
		FROM unnest($1::bigint[], $2::timestamptz[], $3::timestamptz[]) AS u(id, handled, next)
		WHERE j.id = u.id`, moveJob, handled, next); err != nil {
		return nil, 0, wrap(err)
	}
	if len(skipJob) > 0 {
		if _, err := tx.Exec(ctx, `INSERT INTO job_runs (job_id, scheduled_at, status, finished_at, error)
			SELECT id, at, 'skipped', now(), 'the previous run was still going'
			FROM unnest($1::bigint[], $2::timestamptz[]) AS u(id, at)
			ON CONFLICT (job_id, scheduled_at) DO NOTHING`, skipJob, skipAt); err != nil {
			return nil, 0, wrap(err)
		}
	}
	var claimed []jobs.ClaimedRun
	if len(claimJob) > 0 {
		if claimed, err = insertClaims(ctx, tx, o, claimJob, claimAt, byID); err != nil {
			return nil, 0, wrap(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, 0, wrap(err)
	}
	return claimed, len(due), nil
}

// insertClaims creates the running runs of a batch in one statement.
func insertClaims(ctx context.Context, tx pgx.Tx, o jobs.ClaimDueOptions, jobIDs []int64, slots []time.Time, byID map[int64]jobs.Job) ([]jobs.ClaimedRun, error) {
	rows, err := tx.Query(ctx, `WITH r AS (
			INSERT INTO job_runs AS r (job_id, scheduled_at, status, lease_owner, lease_until, attempts, started_at)
			SELECT id, at, 'running', $3, now() + $4::float8 * interval '1 microsecond', 1, now()
			FROM unnest($1::bigint[], $2::timestamptz[]) AS u(id, at)
			ON CONFLICT (job_id, scheduled_at) DO NOTHING
			RETURNING r.*
		), beat AS (
			INSERT INTO replicas (owner) SELECT $3 WHERE $5::bool AND EXISTS (SELECT 1 FROM r)
			ON CONFLICT (owner) DO UPDATE SET seen_at = now()
		)
		SELECT `+runCols+` FROM r JOIN jobs j ON j.id = r.job_id`,
		jobIDs, slots, o.Owner, float64(o.Lease.Microseconds()), o.Beat)
	if err != nil {
		return nil, err
	}
	runs, err := pgx.CollectRows(rows, scanRun)
	if err != nil {
		return nil, err
	}
	out := make([]jobs.ClaimedRun, 0, len(runs))
	for _, r := range runs {
		out = append(out, jobs.ClaimedRun{Job: byID[r.JobID], Run: r})
	}
	return out, nil
}

// NextDue returns the earliest next due time of the enabled jobs, from
// jobs_due_idx, or zero when no job is due ever (none, or all disabled).
// A time long past comes back as a second ago. (greatest ignores NULL:
// without the CASE, no jobs at all would read as a job due a second ago,
// and an idle scheduler would look twice a second.)
func (db *DB) NextDue(ctx context.Context) (time.Time, error) {
	var next *time.Time
	err := db.pool.QueryRow(ctx, `SELECT CASE WHEN min(next_due) IS NOT NULL
			THEN greatest(min(next_due), now() - interval '1 second') END
		FROM jobs WHERE enabled AND retired_at IS NULL AND next_due IS NOT NULL`).Scan(&next)
	if err != nil {
		return time.Time{}, fmt.Errorf("next due job: %w", err)
	}
	if next == nil {
		return time.Time{}, nil
	}
	return *next, nil
}
