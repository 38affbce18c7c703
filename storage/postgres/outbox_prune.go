package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/access"
	"github.com/switchboard-chat/switchboard/bot/approvals"
)

var _ bot.OutboxPruner = (*DB)(nil)

// recentMessages is how many of a session's newest messages keep their
// outbox rows however old (see pruneOutboxSQL).
const recentMessages = 50

// decisionEditGrace is how long after an approval or access request was
// decided the rows posted about it are kept anyway: its buttons are edited
// away right after the decision, through their rows' platform message ids.
const decisionEditGrace = 24 * time.Hour

// pruneOutboxSQL deletes, among the outbox rows after id $1 (the next $2 by
// id, so a pass reads what it walks once and stops at the first row too
// young), those sent or given up on before now() - $3 µs that nobody reads
// any more. Kept:
//   - a row delivering one of its session's newest recentMessages
//     messages: recovery (Unfinished) takes a reply there without a row
//     for one never sent and would send it again;
//   - a row posted about an approval or access request that is pending or
//     was decided within decisionEditGrace ($4 µs): the decision edits it.
//
// It returns how many rows went, the page's last id (where the next page
// starts), whether that row is older than the cut-off (else the walk is
// done) and how many rows the page held.
var pruneOutboxSQL = fmt.Sprintf(`WITH page AS (
		SELECT id, status, created_at, session_key, source_seq FROM outbox
		WHERE id > $1 ORDER BY id LIMIT $2
	), doomed AS (
		SELECT p.id FROM page p
		WHERE p.status <> 'pending'
		  AND p.created_at < now() - $3::float8 * interval '1 microsecond'
		  AND NOT EXISTS (SELECT 1 FROM sessions s
		                  WHERE s.key = p.session_key AND p.source_seq > s.last_seq - %d)
		  AND NOT EXISTS (SELECT 1 FROM decision_messages d
		                  LEFT JOIN approvals a ON d.kind = '%s' AND a.id = d.subject_id
		                  LEFT JOIN access_requests r ON d.kind = '%s' AND r.id = d.subject_id
		                  WHERE d.outbox_id = p.id
		                    AND coalesce(a.decided_at, r.decided_at, 'infinity')
		                        > now() - $4::float8 * interval '1 microsecond'
		                    AND (a.id IS NOT NULL OR r.id IS NOT NULL))
	), gone AS (
		DELETE FROM outbox o USING doomed WHERE o.id = doomed.id RETURNING o.id
	)
	SELECT (SELECT count(*) FROM gone), last.id, last.created_at < now() - $3::float8 * interval '1 microsecond',
		(SELECT count(*) FROM page)
	FROM (SELECT id, created_at FROM page ORDER BY id DESC LIMIT 1) last`,
	recentMessages, approvals.Kind, access.KindRequest)

// PruneOutbox deletes the outbox rows sent or given up on more than keep
// ago that recovery and decisions no longer read (see pruneOutboxSQL),
// walking the table oldest first in pages of up to limit rows until it
// reaches rows younger than keep. Each page is its own short statement,
// and it locks only rows no longer pending, which no claim, send or mark
// touches. After a page that deleted rows it waits as long as the page
// took (pruneRest), so working off a large backlog (the first pass after
// an upgrade) keeps a connection busy half the time, not all of it. It
// also forgets the dispatchers silent for longer than keep (each process
// heartbeats under a name of its own, so every restart leaves one behind;
// their claims ran out long ago). It returns how many outbox rows went; on
// an error or when ctx ends, those deleted before.
func (db *DB) PruneOutbox(ctx context.Context, keep time.Duration, limit int) (int, error) {
	if keep <= 0 || limit <= 0 {
		return 0, fmt.Errorf("prune outbox: keep (%s) and page size (%d) must be positive", keep, limit)
	}
	err := withRetry(ctx, func(ctx context.Context) error {
		_, err := db.pool.Exec(ctx, `DELETE FROM replicas WHERE seen_at < now() - $1::float8 * interval '1 microsecond'`,
			float64(keep.Microseconds()))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune outbox: forget silent dispatchers: %w", err)
	}
	return db.prunePages(ctx, "prune outbox", limit, pruneOutboxSQL, float64(keep.Microseconds()),
		float64(decisionEditGrace.Microseconds()))
}

// prunePages walks a table oldest first, a page of up to limit rows per
// run of query (its own short statement, retried when the error is
// transient), until a page is short or ends at a row younger than the
// cut-off. query takes the id after which the page starts ($1), limit ($2)
// and args ($3…), and returns one row: rows deleted, the id of the last
// row read (where the next page starts), whether that row is older than
// the cut-off, and how many rows the page read; no row means nothing after
// $1. After a page that deleted rows it waits as long as the page took
// (pruneRest), so working off a large backlog keeps a connection busy half
// the time, not all of it. It returns how many rows went; on an error or
// when ctx ends, those deleted before.
func (db *DB) prunePages(ctx context.Context, what string, limit int, query string, args ...any) (int, error) {
	total := 0
	var after int64
	for {
		var gone, rows int
		var last int64
		var old bool
		start := time.Now()
		err := withRetry(ctx, func(ctx context.Context) error {
			return db.pool.QueryRow(ctx, query, append([]any{after, limit}, args...)...).Scan(&gone, &last, &old, &rows)
		})
		if errors.Is(err, pgx.ErrNoRows) {
			return total, nil // nothing after `after`
		}
		if err != nil {
			return total, fmt.Errorf("%s after row %d: %w", what, after, err)
		}
		total += gone
		if rows < limit || !old {
			return total, nil
		}
		after = last
		if gone > 0 {
			if err := pruneRest(ctx, time.Since(start)); err != nil {
				return total, fmt.Errorf("%s after row %d: %w", what, after, err)
			}
		}
	}
}

// pruneRest waits took (at most a second) between two pages of a prune
// pass, or until ctx ends.
func pruneRest(ctx context.Context, took time.Duration) error {
	t := time.NewTimer(min(took, time.Second))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
