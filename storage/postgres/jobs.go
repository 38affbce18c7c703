package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/jobs"
)

var _ jobs.Store = (*DB)(nil)

const jobCols = `id, name, schedule, timezone, agent, prompt, platform, chat_id, thread_id,
	enabled, overlap, catch_up, created_by, source, created_at, updated_at`

// jobColsJ is jobCols of the table aliased j.
const jobColsJ = `j.id, j.name, j.schedule, j.timezone, j.agent, j.prompt, j.platform, j.chat_id,
	j.thread_id, j.enabled, j.overlap, j.catch_up, j.created_by, j.source, j.created_at, j.updated_at`

// jobDest is where a row of jobCols scans into j.
func jobDest(j *jobs.Job) []any {
	return []any{&j.ID, &j.Name, &j.Schedule, &j.Timezone, &j.Agent, &j.Prompt,
		&j.Target.Platform, &j.Target.ChatID, &j.Target.ThreadID, &j.Enabled, &j.Overlap,
		&j.CatchUp, &j.CreatedBy, &j.Source, &j.CreatedAt, &j.UpdatedAt}
}

func scanJob(row pgx.CollectableRow) (jobs.Job, error) {
	var j jobs.Job
	err := row.Scan(jobDest(&j)...)
	return j, err
}

// jobReplan is the SET list of an upsert that keeps where the job's
// schedule stands unless what it means changed: a new schedule or time zone
// is planned again from the last slot handled, and a job back from
// retirement starts afresh, as a new one does.
const jobReplan = `next_due = CASE WHEN j.retired_at IS NOT NULL OR j.schedule IS DISTINCT FROM excluded.schedule
			OR j.timezone IS DISTINCT FROM excluded.timezone THEN '-infinity' ELSE j.next_due END,
		last_slot = CASE WHEN j.retired_at IS NOT NULL THEN now() ELSE j.last_slot END,
		retired_at = NULL`

// UpsertJob creates or replaces the job named j.Name (its id and creation
// time are kept) and returns it as stored.
func (db *DB) UpsertJob(ctx context.Context, j jobs.Job) (jobs.Job, error) {
	rows, err := db.pool.Query(ctx, `INSERT INTO jobs AS j
			(name, schedule, timezone, agent, prompt, platform, chat_id, thread_id,
			 enabled, overlap, catch_up, created_by, source)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
		ON CONFLICT (name) DO UPDATE SET schedule = excluded.schedule, timezone = excluded.timezone,
			agent = excluded.agent, prompt = excluded.prompt, platform = excluded.platform,
			chat_id = excluded.chat_id, thread_id = excluded.thread_id, enabled = excluded.enabled,
			overlap = excluded.overlap, catch_up = excluded.catch_up, created_by = excluded.created_by,
			source = excluded.source, updated_at = now(), `+jobReplan+`
		RETURNING `+jobCols,
		storable(j.Name), storable(j.Schedule), storable(j.Timezone), storable(j.Agent), storable(j.Prompt),
		storable(j.Target.Platform), storable(j.Target.ChatID), storable(j.Target.ThreadID), j.Enabled,
		orDefault(j.Overlap, jobs.OverlapSkip), orDefault(j.CatchUp, jobs.CatchUpLast),
		storable(j.CreatedBy), orDefault(j.Source, jobs.JobFromChat))
	if err != nil {
		return jobs.Job{}, fmt.Errorf("save job %s: %w", j.Name, err)
	}
	stored, err := pgx.CollectExactlyOneRow(rows, scanJob)
	if err != nil {
		return jobs.Job{}, fmt.Errorf("save job %s: %w", j.Name, err)
	}
	return stored, nil
}

// GetJob returns the job named name or bot.ErrNotFound (also when it was
// retired from the config).
func (db *DB) GetJob(ctx context.Context, name string) (jobs.Job, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+jobCols+` FROM jobs WHERE name = $1 AND retired_at IS NULL`, name)
	if err != nil {
		return jobs.Job{}, fmt.Errorf("get job %s: %w", name, err)
	}
	j, err := pgx.CollectExactlyOneRow(rows, scanJob)
	if errors.Is(err, pgx.ErrNoRows) {
		return jobs.Job{}, fmt.Errorf("job %s: %w", name, bot.ErrNotFound)
	}
	if err != nil {
		return jobs.Job{}, fmt.Errorf("get job %s: %w", name, err)
	}
	return j, nil
}

// ListJobs lists all jobs by name, but those retired from the config.
func (db *DB) ListJobs(ctx context.Context) ([]jobs.Job, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+jobCols+` FROM jobs WHERE retired_at IS NULL ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	jobs, err := pgx.CollectRows(rows, scanJob)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	return jobs, nil
}

// SetJobEnabled pauses (false) or resumes (true) the job named name.
func (db *DB) SetJobEnabled(ctx context.Context, name string, enabled bool) error {
	tag, err := db.pool.Exec(ctx, `UPDATE jobs SET enabled = $2, updated_at = now() WHERE name = $1 AND retired_at IS NULL`, name, enabled)
	if err != nil {
		return fmt.Errorf("set job %s enabled: %w", name, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("job %s: %w", name, bot.ErrNotFound)
	}
	return nil
}

// DeleteJob deletes the job named name and its runs.
func (db *DB) DeleteJob(ctx context.Context, name string) error {
	tag, err := db.pool.Exec(ctx, `DELETE FROM jobs WHERE name = $1`, name)
	if err != nil {
		return fmt.Errorf("delete job %s: %w", name, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("job %s: %w", name, bot.ErrNotFound)
	}
	return nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
