package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/bot/knowledge"
	"github.com/switchboard-chat/switchboard/tools"
)

var _ knowledge.JobStore = (*DB)(nil)

// maxJobError bounds the last error a queue row keeps.
const maxJobError = 500

// claimKnowledgeSQL claims due rows ($1 at most, fewer than $3 attempts)
// for $2 seconds, skipping rows another worker is claiming, and returns
// each with its document's current content (none when it is gone).
const claimKnowledgeSQL = `
	WITH due AS (
		SELECT agent, scope, path FROM knowledge_jobs
		WHERE next_at <= now() AND attempts < $3
		ORDER BY next_at LIMIT $1
		FOR UPDATE SKIP LOCKED
	), claimed AS (
		UPDATE knowledge_jobs j SET attempts = j.attempts + 1, next_at = now() + make_interval(secs => $2)
		FROM due WHERE j.agent = due.agent AND j.scope = due.scope AND j.path = due.path
		RETURNING j.agent, j.scope, j.path, j.generation, j.attempts
	)
	SELECT c.agent, c.scope, c.path, c.generation, c.attempts, d.content IS NOT NULL,
	       coalesce(d.content, ''), coalesce(md5(d.content), '')
	FROM claimed c LEFT JOIN agent_docs d ON d.agent = c.agent AND d.scope = c.scope AND d.path = c.path`

// ClaimJobs implements knowledge.JobStore.
func (db *DB) ClaimJobs(ctx context.Context, limit int, lease time.Duration, maxAttempts int) ([]knowledge.Job, error) {
	rows, err := db.pool.Query(ctx, claimKnowledgeSQL, limit, lease.Seconds(), maxAttempts)
	if err != nil {
		return nil, fmt.Errorf("claim knowledge jobs: %w", err)
	}
	jobs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (knowledge.Job, error) {
		var j knowledge.Job
		err := r.Scan(&j.Key.Agent, &j.Key.Scope, &j.Key.Path, &j.Generation, &j.Attempts, &j.Exists, &j.Content, &j.Hash)
		return j, err
	})
	if err != nil {
		return nil, fmt.Errorf("claim knowledge jobs: %w", err)
	}
	return jobs, nil
}

// FinishJob implements knowledge.JobStore.
func (db *DB) FinishJob(ctx context.Context, j knowledge.Job) error {
	k := j.Key
	_, err := db.pool.Exec(ctx, `DELETE FROM knowledge_jobs WHERE agent = $1 AND scope = $2 AND path = $3 AND generation = $4`,
		k.Agent, k.Scope, k.Path, j.Generation)
	if err != nil {
		return fmt.Errorf("finish knowledge job %s: %w", k.Path, err)
	}
	return nil
}

// RetryJob implements knowledge.JobStore.
func (db *DB) RetryJob(ctx context.Context, j knowledge.Job, after time.Duration, refund bool, reason string) error {
	k := j.Key
	_, err := db.pool.Exec(ctx, `UPDATE knowledge_jobs
		SET next_at = now() + make_interval(secs => $5), last_error = $6,
		    attempts = CASE WHEN $7 THEN greatest(attempts - 1, 0) ELSE attempts END
		WHERE agent = $1 AND scope = $2 AND path = $3 AND generation = $4`,
		k.Agent, k.Scope, k.Path, j.Generation, after.Seconds(), storable(truncate(reason, maxJobError)), refund)
	if err != nil {
		return fmt.Errorf("retry knowledge job %s: %w", k.Path, err)
	}
	return nil
}

// ReplaceFacts implements knowledge.JobStore: the document's row is read
// FOR SHARE, so a write or delete of it waits for this transaction and then
// queues (or cascades) as usual.
func (db *DB) ReplaceFacts(ctx context.Context, key tools.DocKey, hash string, f knowledge.Facts) (bool, error) {
	applied := false
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var current string
		err := tx.QueryRow(ctx, `SELECT md5(content) FROM agent_docs WHERE agent = $1 AND scope = $2 AND path = $3 FOR SHARE`,
			key.Agent, key.Scope, key.Path).Scan(&current)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && current != hash) {
			return nil
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM knowledge_entities WHERE agent = $1 AND scope = $2 AND path = $3`,
			key.Agent, key.Scope, key.Path); err != nil {
			return err
		}
		if err := insertFacts(ctx, tx, key, f); err != nil {
			return err
		}
		applied = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("replace facts of %s: %w", key.Path, err)
	}
	return applied, nil
}

// insertFacts writes f's entities and relations for the document at key,
// each kind in one statement.
func insertFacts(ctx context.Context, tx pgx.Tx, key tools.DocKey, f knowledge.Facts) error {
	if len(f.Entities) == 0 {
		return nil
	}
	keys, names, types := make([]string, len(f.Entities)), make([]string, len(f.Entities)), make([]string, len(f.Entities))
	for i, e := range f.Entities {
		keys[i], names[i], types[i] = storable(e.Key), storable(e.Name), storable(e.Type)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO knowledge_entities (agent, scope, path, key, name, type)
		SELECT $1, $2, $3, k, n, t FROM unnest($4::text[], $5::text[], $6::text[]) AS u(k, n, t)
		ON CONFLICT DO NOTHING`, key.Agent, key.Scope, key.Path, keys, names, types); err != nil {
		return fmt.Errorf("insert entities: %w", err)
	}
	if len(f.Relations) == 0 {
		return nil
	}
	from, to, rtypes := make([]string, len(f.Relations)), make([]string, len(f.Relations)), make([]string, len(f.Relations))
	for i, r := range f.Relations {
		from[i], to[i], rtypes[i] = storable(r.From), storable(r.To), storable(r.Type)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO knowledge_relations (agent, scope, path, from_key, to_key, type)
		SELECT $1, $2, $3, f, t, ty FROM unnest($4::text[], $5::text[], $6::text[]) AS u(f, t, ty)
		ON CONFLICT DO NOTHING`, key.Agent, key.Scope, key.Path, from, to, rtypes); err != nil {
		return fmt.Errorf("insert relations: %w", err)
	}
	return nil
}
