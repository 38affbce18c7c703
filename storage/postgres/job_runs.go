package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/jobs"
)

// maxRunErrorLen caps the stored error of a job run.
const maxRunErrorLen = 2000

const runCols = `r.id, r.job_id, j.name, r.scheduled_at, r.status, r.lease_owner,
	coalesce(r.lease_until, 'epoch'), r.attempts, coalesce(r.started_at, 'epoch'),
	coalesce(r.finished_at, 'epoch'), r.tokens_in, r.tokens_out, r.error`

func scanRun(row pgx.CollectableRow) (jobs.JobRun, error) {
	var (
		r                        jobs.JobRun
		lease, started, finished time.Time
		tokensIn, tokensOut      int64
	)
	err := row.Scan(&r.ID, &r.JobID, &r.JobName, &r.ScheduledAt, &r.Status, &r.LeaseOwner, &lease,
		&r.Attempts, &started, &finished, &tokensIn, &tokensOut, &r.Error)
	r.LeaseUntil, r.StartedAt, r.FinishedAt = zeroEpoch(lease), zeroEpoch(started), zeroEpoch(finished)
	r.TokensIn, r.TokensOut = int(tokensIn), int(tokensOut)
	return r, err
}

func zeroEpoch(t time.Time) time.Time {
	if t.Unix() == 0 {
		return time.Time{}
	}
	return t
}

// LastSlot returns the newest slot of the job that has a run record.
func (db *DB) LastSlot(ctx context.Context, jobID int64) (time.Time, error) {
	var last *time.Time
	err := db.pool.QueryRow(ctx, `SELECT max(scheduled_at) FROM job_runs WHERE job_id = $1`, jobID).Scan(&last)
	if err != nil {
		return time.Time{}, fmt.Errorf("last slot of job %d: %w", jobID, err)
	}
	if last == nil {
		return time.Time{}, nil
	}
	return *last, nil
}

// ClaimSlot claims a slot in one transaction that first locks the job's
// row, so claims of one job are serialised across replicas and the overlap
// check cannot race with another claim. A run left open by a dead replica
// counts as going until it is taken over, so later slots never overtake it
// in the job's session. With beat, the statement that claims the run also
// writes owner's heartbeat, only when it claims it.
func (db *DB) ClaimSlot(ctx context.Context, jobID int64, scheduledAt time.Time, owner string, lease time.Duration, overlap string, beat bool) (jobs.JobRun, bool, error) {
	wrap := func(err error) error { return fmt.Errorf("claim slot %s of job %d: %w", scheduledAt.UTC(), jobID, err) }
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return jobs.JobRun{}, false, wrap(err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	var busy bool
	err = tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM job_runs
			WHERE job_id = j.id AND status IN ('running', 'pending') AND scheduled_at <> $2)
		FROM jobs j WHERE j.id = $1 FOR UPDATE OF j`, jobID, scheduledAt).Scan(&busy)
	if errors.Is(err, pgx.ErrNoRows) {
		return jobs.JobRun{}, false, wrap(bot.ErrNotFound)
	}
	if err != nil {
		return jobs.JobRun{}, false, wrap(err)
	}
	if busy {
		if overlap != jobs.OverlapQueue {
			_, err = tx.Exec(ctx, `INSERT INTO job_runs (job_id, scheduled_at, status, finished_at, error)
				VALUES ($1, $2, 'skipped', now(), 'the previous run was still going')
				ON CONFLICT (job_id, scheduled_at) DO NOTHING`, jobID, scheduledAt)
			if err != nil {
				return jobs.JobRun{}, false, wrap(err)
			}
		}
		if err := tx.Commit(ctx); err != nil {
			return jobs.JobRun{}, false, wrap(err)
		}
		if overlap == jobs.OverlapQueue {
			return jobs.JobRun{}, false, jobs.ErrSlotBusy
		}
		return jobs.JobRun{}, false, nil
	}
	rows, err := tx.Query(ctx, `WITH r AS (
			INSERT INTO job_runs AS r (job_id, scheduled_at, status, lease_owner, lease_until, attempts, started_at)
			VALUES ($1, $2, 'running', $3, now() + $4::float8 * interval '1 microsecond', 1, now())
			ON CONFLICT (job_id, scheduled_at) DO UPDATE SET status = 'running',
				lease_owner = excluded.lease_owner, lease_until = excluded.lease_until,
				attempts = r.attempts + 1, started_at = coalesce(r.started_at, excluded.started_at)
			WHERE r.status IN ('running', 'pending') AND (r.lease_until < now() OR `+runOwnerGone+`)
			RETURNING r.*
		), beat AS (
			INSERT INTO replicas (owner) SELECT $3 WHERE $5::bool AND EXISTS (SELECT 1 FROM r)
			ON CONFLICT (owner) DO UPDATE SET seen_at = now()
		)
		SELECT `+runCols+` FROM r JOIN jobs j ON j.id = r.job_id`,
		jobID, scheduledAt, owner, float64(lease.Microseconds()), beat)
	if err != nil {
		return jobs.JobRun{}, false, wrap(err)
	}
	runs, err := pgx.CollectRows(rows, scanRun)
	if err != nil {
		return jobs.JobRun{}, false, wrap(err)
	}
	if err := tx.Commit(ctx); err != nil {
		return jobs.JobRun{}, false, wrap(err)
	}
	if len(runs) == 0 {
		return jobs.JobRun{}, false, nil
	}
	return runs[0], true, nil
}

// runOwnerGone is true for a running job run r whose owner stopped sending
// heartbeats (see Heartbeat) more than OwnerTimeout ago: the replica died,
// so its run is taken over now rather than when the lease runs out. The
// interval literal must equal OwnerTimeout (TestRunOwnerGoneMatchesTimeout).
const runOwnerGone = `(r.status = 'running' AND EXISTS (SELECT 1 FROM replicas p
		WHERE p.owner = r.lease_owner AND p.seen_at < now() - interval '4 seconds'))`

// RenewLease extends owner's lease on running run runID by lease from now.
func (db *DB) RenewLease(ctx context.Context, runID int64, owner string, lease time.Duration) error {
	tag, err := db.pool.Exec(ctx, `UPDATE job_runs SET lease_until = now() + $3::float8 * interval '1 microsecond'
		WHERE id = $1 AND lease_owner = $2 AND status = 'running'`, runID, owner, float64(lease.Microseconds()))
	if err != nil {
		return fmt.Errorf("renew lease of job run %d: %w", runID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("renew lease of job run %d: %w", runID, jobs.ErrLeaseLost)
	}
	return nil
}

// DueRuns lists, oldest slot first, runs of enabled jobs that are running
// with an expired lease or a dead owner (runOwnerGone), or pending with a
// due retry.
func (db *DB) DueRuns(ctx context.Context, limit int) ([]jobs.JobRun, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+runCols+` FROM job_runs r JOIN jobs j ON j.id = r.job_id
		WHERE r.status IN ('running', 'pending') AND (r.lease_until < now() OR `+runOwnerGone+`) AND j.enabled
		ORDER BY r.scheduled_at LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("find due job runs: %w", err)
	}
	runs, err := pgx.CollectRows(rows, scanRun)
	if err != nil {
		return nil, fmt.Errorf("find due job runs: %w", err)
	}
	return runs, nil
}

// FinishRun records the outcome of owner's attempt at run runID: a final
// status, or RunPending with out.RetryAt for another attempt then.
func (db *DB) FinishRun(ctx context.Context, runID int64, owner string, out jobs.RunOutcome) error {
	var retryAt *time.Time
	if out.Status == jobs.RunPending {
		retryAt = &out.RetryAt
	}
	tag, err := db.pool.Exec(ctx, `UPDATE job_runs SET status = $3,
			lease_until = $4, finished_at = CASE WHEN $3 = 'pending' THEN NULL ELSE now() END,
			tokens_in = tokens_in + $5, tokens_out = tokens_out + $6, error = $7
		WHERE id = $1 AND lease_owner = $2 AND status = 'running'`,
		runID, owner, out.Status, retryAt, int64(out.TokensIn), int64(out.TokensOut),
		truncate(storable(out.Error), maxRunErrorLen))
	if err != nil {
		return fmt.Errorf("finish job run %d: %w", runID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("finish job run %d: %w", runID, jobs.ErrLeaseLost)
	}
	return nil
}

// finishWithReplySQL finishes run $1 of owner $2 as $3 with $4 and $5 more
// tokens and, only then, inserts the reply's outbox row (session $6, seq
// $7, the rest outboxArgs's from $8, unclaimed: the dispatcher sends it).
var finishWithReplySQL = `WITH fin AS (
		UPDATE job_runs SET status = $3, lease_until = NULL, finished_at = now(),
			tokens_in = tokens_in + $4, tokens_out = tokens_out + $5, error = ''
		WHERE id = $1 AND lease_owner = $2 AND status = 'running'
		RETURNING id
	), queued AS (` + outboxInsertSQL(`$6::text`, `$7::bigint`, `fin, `, 8) + `)
	SELECT count(*) FROM fin`

// FinishWithReply implements jobs.Store: the run's finish and its reply's
// outbox row commit together, or neither does, in one commit with the runs
// that finish at the same moment (db.finishes).
func (db *DB) FinishWithReply(ctx context.Context, runID int64, owner string, out jobs.RunOutcome, reply bot.OutboxMessage) error {
	oargs, err := outboxArgs(reply, bot.Claim{})
	if err != nil {
		return fmt.Errorf("finish job run %d: %w", runID, err)
	}
	var seq *int64 // as Enqueue stores it: NULL for none
	if reply.SourceSeq != 0 {
		seq = &reply.SourceSeq
	}
	args := append([]any{runID, owner, jobs.RunSucceeded, int64(out.TokensIn), int64(out.TokensOut),
		nullIfEmpty(reply.Session), seq}, oargs...)
	var finished int
	if err := db.finishes.rowOnce(db.pool, strconv.FormatInt(runID, 10), finishWithReplySQL, args)(ctx, &finished); err != nil {
		return fmt.Errorf("finish job run %d: %w", runID, err)
	}
	if finished == 0 {
		return fmt.Errorf("finish job run %d: %w", runID, jobs.ErrLeaseLost)
	}
	return nil
}

// RecentRuns lists the newest limit runs of the job, newest slot first.
func (db *DB) RecentRuns(ctx context.Context, jobID int64, limit int) ([]jobs.JobRun, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+runCols+` FROM job_runs r JOIN jobs j ON j.id = r.job_id
		WHERE r.job_id = $1 ORDER BY r.scheduled_at DESC LIMIT $2`, jobID, limit)
	if err != nil {
		return nil, fmt.Errorf("list runs of job %d: %w", jobID, err)
	}
	runs, err := pgx.CollectRows(rows, scanRun)
	if err != nil {
		return nil, fmt.Errorf("list runs of job %d: %w", jobID, err)
	}
	return runs, nil
}
