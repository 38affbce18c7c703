package postgres

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/switchboard-chat/switchboard/storage/batcher"
	"github.com/switchboard-chat/switchboard/storage/postgres/redact"
)

const (
	// groupMax caps how many callers' statements one group commit
	// carries, so that a transaction and the row locks it holds stay
	// short.
	groupMax = 64
	// groupLockTimeout bounds how long a group waits for a row lock (a
	// session another transaction holds) before it gives up and its
	// callers run alone, each waiting only for its own rows: one held
	// session then holds up the others for a moment, not for as long as
	// it is held. Groups wait for one another's commits, a WAL flush, far
	// less than this.
	groupLockTimeout = 250 * time.Millisecond
	// groupTimeout bounds a group in flight. It does not end with the
	// context of the caller that sends it: one caller giving up must not
	// leave the others' commits unknown.
	groupTimeout = 30 * time.Second
)

// lockTimeoutSQL sets lock_timeout, in milliseconds ($1), for the rest of
// the current transaction only (see groupLockTimeout). It is a function
// call rather than SET LOCAL because PostgreSQL before 17 warns, in every
// client and in its log, about SET LOCAL in a pipeline's implicit
// transaction, although it applies it.
const lockTimeoutSQL = `SELECT set_config('lock_timeout', $1, true)`

// batchSender is what sends a pipelined batch: the pool, a connection or a
// transaction.
type batchSender interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// groupCommit runs the statements of concurrent callers as one pipelined
// batch: one round trip, one transaction and one commit for all of them,
// where each alone would pay its own. Under load this is most of what a
// short write costs PostgreSQL, and with every commit waiting for its WAL
// flush, one flush serves the whole group.
//
// One group is in flight at a time. The caller that finds none in flight
// sends its own at once (a lone caller waits for nobody); callers that come
// meanwhile queue, and when the group in flight ends the first of them
// sends everything queued. The statements run in the order of their keys
// (stable for equal keys), so two groups, of this replica or another, take
// the row locks of the sessions they write in the same order and cannot
// deadlock each other.
//
// The batch is all or nothing: when a statement in it fails (one caller's
// duplicate, say), nothing of it is stored and every caller gets the
// error, to run its statements alone (see run). The zero value is ready to
// use.
type groupCommit struct {
	// failed, when set, hears of each group that failed and how many
	// calls it carried (they then run alone and report their own
	// failures).
	failed func(calls int, err error)
	// lockTimeout replaces groupLockTimeout when set (tests).
	lockTimeout time.Duration

	group batcher.Group[*groupMember]
}

// newGroupCommit returns a groupCommit of up to groupMax calls a group
// that tells failed of each group that fails.
func newGroupCommit(failed func(calls int, err error)) *groupCommit {
	return &groupCommit{failed: failed, group: batcher.Group[*groupMember]{Max: groupMax}}
}

// groupMember is one caller's part of a group.
type groupMember struct {
	key   string
	queue func(b *pgx.Batch)
}

// run adds the statements queue adds (with callbacks that keep their
// results) to the next group sent to the pool and returns when it has
// committed or failed. On an error what the callbacks kept must be thrown
// away and the caller runs its statements alone, which tells its own
// failure from another's. An error from the server means nothing of the
// group was stored; one on the way back (the connection broke, a result
// did not scan) leaves that unknown, as for a single statement, so the
// statements must be safe to run twice (see withRetry).
//
// A caller waiting in the queue does not leave when its ctx ends: its
// statements may be on the wire already. The group in flight runs under
// the values of the caller that sends it, not its cancellation, for up to
// groupTimeout.
func (g *groupCommit) run(ctx context.Context, to batchSender, key string, queue func(b *pgx.Batch)) error {
	return g.group.Do(ctx, &groupMember{key: key, queue: queue}, func(ctx context.Context, group []*groupMember) error {
		err := g.exec(ctx, to, group)
		if err != nil && g.failed != nil {
			g.failed(len(group), err)
		}
		return err
	})
}

// rowOnce returns a function for a retry loop that runs sql — one row,
// scanned into dest, or none: pgx.ErrNoRows — in the next group the first
// time, and alone every later time and when the group fails. A statement that finds no row does not
// fail the group: the others' rows are kept.
func (g *groupCommit) rowOnce(to batchSender, key, sql string, args []any) func(ctx context.Context, dest ...any) error {
	tried := false
	return func(ctx context.Context, dest ...any) error {
		if tried {
			return rowAlone(ctx, to, sql, args, dest)
		}
		tried = true
		found := true
		err := g.run(ctx, to, key, func(q *pgx.Batch) {
			q.Queue(sql, args...).QueryRow(func(row pgx.Row) error {
				err := row.Scan(dest...)
				if errors.Is(err, pgx.ErrNoRows) {
					found = false
					return nil
				}
				return err
			})
		})
		switch {
		case err != nil:
			return rowAlone(ctx, to, sql, args, dest) // maybe another's failure
		case !found:
			return pgx.ErrNoRows
		}
		return nil
	}
}

// execOnce runs sql, which returns no rows, in the next group, and alone
// when the group fails on the server (then nothing of it was stored: a lock
// timeout, another caller's bad row). A failure on the way back leaves
// unknown whether the group committed and is returned as it is, so sql
// need not be safe to run twice.
func (g *groupCommit) execOnce(ctx context.Context, to batchSender, key, sql string, args []any) error {
	err := g.run(ctx, to, key, func(b *pgx.Batch) { b.Queue(sql, args...) })
	if _, rejected := errors.AsType[*pgconn.PgError](err); rejected {
		b := &pgx.Batch{}
		b.Queue(sql, args...)
		return to.SendBatch(ctx, b).Close()
	}
	return err
}

// rowAlone runs sql in a batch of its own and scans its one row into dest;
// none is pgx.ErrNoRows.
func rowAlone(ctx context.Context, to batchSender, sql string, args []any, dest []any) error {
	b := &pgx.Batch{}
	b.Queue(sql, args...).QueryRow(func(row pgx.Row) error { return row.Scan(dest...) })
	return to.SendBatch(ctx, b).Close()
}

// exec sends group's statements, in the order of their keys, as one batch
// behind the lock timeout's setting.
func (g *groupCommit) exec(ctx context.Context, to batchSender, group []*groupMember) error {
	slices.SortStableFunc(group, func(a, b *groupMember) int { return strings.Compare(a.key, b.key) })
	b := &pgx.Batch{}
	wait := g.lockTimeout
	if wait == 0 {
		wait = groupLockTimeout
	}
	b.Queue(lockTimeoutSQL, strconv.FormatInt(wait.Milliseconds(), 10))
	for _, m := range group {
		m.queue(b)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), groupTimeout)
	defer cancel()
	return to.SendBatch(ctx, b).Close()
}

// groupFailed returns a groupCommit.failed that logs at debug level.
func (db *DB) groupFailed(name string) func(calls int, err error) {
	return func(calls int, err error) {
		db.logger.Debug("group commit failed; its calls store alone", "group", name, "calls", calls,
			"err", redact.Error(err, db.secret))
	}
}
