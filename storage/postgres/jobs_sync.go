package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/bot/jobs"
)

var _ jobs.ConfigSyncer = (*DB)(nil)

// jobSyncLock is the transaction-level advisory lock key under which config
// jobs are synced, so replicas starting together sync one at a time.
const jobSyncLock = 0x6a6f6273796e63 // "jobsync"

// SyncConfigJobs upserts each job of want (changing a stored row only when
// a field differs, so an unchanged config writes nothing and keeps each
// job's schedule position) and retires the stored config jobs not in want,
// all under jobSyncLock in one transaction.
func (db *DB) SyncConfigJobs(ctx context.Context, want []jobs.Job) (jobs.ConfigSyncResult, error) {
	var res jobs.ConfigSyncResult
	wrap := func(err error) error { return fmt.Errorf("sync config jobs: %w", err) }
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return res, wrap(err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(jobSyncLock)); err != nil {
		return res, wrap(err)
	}
	names := make([]string, 0, len(want))
	batch := &pgx.Batch{}
	for _, j := range want {
		names = append(names, storable(j.Name))
		batch.Queue(`INSERT INTO jobs AS j
				(name, schedule, timezone, agent, prompt, platform, chat_id, thread_id,
				 enabled, overlap, catch_up, created_by, source)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'config', 'config')
			ON CONFLICT (name) DO UPDATE SET schedule = excluded.schedule, timezone = excluded.timezone,
				agent = excluded.agent, prompt = excluded.prompt, platform = excluded.platform,
				chat_id = excluded.chat_id, thread_id = excluded.thread_id, enabled = excluded.enabled,
				overlap = excluded.overlap, catch_up = excluded.catch_up, created_by = excluded.created_by,
				source = excluded.source, updated_at = now(), `+jobReplan+`
			WHERE (j.schedule, j.timezone, j.agent, j.prompt, j.platform, j.chat_id, j.thread_id,
					j.enabled, j.overlap, j.catch_up, j.created_by, j.source, j.retired_at IS NULL)
				IS DISTINCT FROM (excluded.schedule, excluded.timezone, excluded.agent, excluded.prompt,
					excluded.platform, excluded.chat_id, excluded.thread_id, excluded.enabled,
					excluded.overlap, excluded.catch_up, excluded.created_by, excluded.source, true)
			RETURNING j.name`,
			storable(j.Name), storable(j.Schedule), storable(j.Timezone), storable(j.Agent), storable(j.Prompt),
			storable(j.Target.Platform), storable(j.Target.ChatID), storable(j.Target.ThreadID), j.Enabled,
			orDefault(j.Overlap, jobs.OverlapSkip), orDefault(j.CatchUp, jobs.CatchUpLast))
	}
	br := tx.SendBatch(ctx, batch)
	for _, j := range want {
		var name string
		err := br.QueryRow().Scan(&name)
		switch {
		case err == nil:
			res.Saved = append(res.Saved, name)
		case !errors.Is(err, pgx.ErrNoRows):
			_ = br.Close()
			return res, wrap(fmt.Errorf("save job %s: %w", j.Name, err))
		}
	}
	if err := br.Close(); err != nil {
		return res, wrap(err)
	}
	rows, err := tx.Query(ctx, `UPDATE jobs SET retired_at = now(), updated_at = now()
		WHERE source = 'config' AND retired_at IS NULL AND NOT (name = ANY($1::text[]))
		RETURNING name`, names)
	if err != nil {
		return res, wrap(err)
	}
	if res.Retired, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		return res, wrap(err)
	}
	if err := tx.Commit(ctx); err != nil {
		return res, wrap(err)
	}
	return res, nil
}
