package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// noFlushSQL turns off synchronous_commit for the rest of the current
// transaction only. It is a function call rather than SET LOCAL because
// PostgreSQL before 17 warns (in every client and in its log) about SET LOCAL
// in a pipeline's implicit transaction, although it applies it.
const noFlushSQL = `SELECT set_config('synchronous_commit', 'off', true)`

// customPlanSQL makes PostgreSQL plan every later statement of the current
// transaction for its parameters' values (plan_cache_mode
// force_custom_plan), for a statement whose best plan depends on how much
// a table has grown. Otherwise, after five executions of a prepared
// statement, PostgreSQL may settle on one plan for any values, costed for
// the table as it was then, and keep it until something analyzes the
// table: a batch of outbox marks planned while the outbox was nearly
// empty went on reading the whole outbox (docs/benchmarks.md, twenty-first
// round). Under load, planning a batch of marks took 0.13 ms; the scan took
// 2.6 ms a batch once the outbox held 12 000 rows, and grows with it. The
// planning is paid on every batch, also where a generic plan would have
// been right (a table analyzed since): a bounded cost for a bounded plan.
const customPlanSQL = `SELECT set_config('plan_cache_mode', 'force_custom_plan', true)`

// killDeadEntriesSQL keeps PostgreSQL from reading an index through a
// bitmap for the rest of the current transaction (enable_bitmapscan off),
// for a statement that walks an index full of entries of rows that left it.
// Every reply's outbox row is inserted pending and marked sent moments
// later, which leaves its entry in the claim's index (outbox_claim_idx)
// pointing at a dead row until a vacuum; autovacuum comes only once a
// fifth of the table is dead (or never, where it is off). A bitmap scan,
// which PostgreSQL picks for a table it has no statistics of yet, visits
// every such entry's heap page on every claim and leaves the entry as it
// was; a plain index scan visits it once and marks it dead, and later
// scans skip it: with 8 100 such entries a claim read 261 buffers in
// 0.9 ms, and 23 in 0.06 ms once one plain scan had passed
// (docs/benchmarks.md, twenty-second round).
const killDeadEntriesSQL = `SELECT set_config('enable_bitmapscan', 'off', true)`

// lockTimeoutSQL sets lock_timeout, in milliseconds ($1), for the rest of
// the current transaction only (see groupLockTimeout).
const lockTimeoutSQL = `SELECT set_config('lock_timeout', $1, true)`

// batchSender is what sends a pipelined batch: the pool, a connection or a
// transaction.
type batchSender interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// sendWithoutFlush sends the statements queue adds as one pipelined batch
// after noFlushSQL: one round trip. Sent to the pool it is one implicit
// transaction (all or nothing); sent inside a transaction it makes that
// transaction's commit asynchronous. Such a commit is visible to every
// session at once but does not wait for its WAL to reach disk: a
// PostgreSQL crash (not a crash of this process) can lose the last such
// commits, up to three times wal_writer_delay (0.6 s by default) of them,
// so it is only for writes whose loss is made good otherwise. Any later
// durable commit flushes them along with its own.
func sendWithoutFlush(ctx context.Context, to batchSender, queue func(b *pgx.Batch)) error {
	b := &pgx.Batch{}
	b.Queue(noFlushSQL)
	queue(b)
	return to.SendBatch(ctx, b).Close()
}

// withoutFlush is sendWithoutFlush to the pool.
func (db *DB) withoutFlush(ctx context.Context, queue func(b *pgx.Batch)) error {
	return sendWithoutFlush(ctx, db.pool, queue)
}

// execWithoutFlush runs one statement through withoutFlush and returns its
// command tag.
func (db *DB) execWithoutFlush(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	var tag pgconn.CommandTag
	err := db.withoutFlush(ctx, func(b *pgx.Batch) {
		b.Queue(sql, args...).Exec(func(ct pgconn.CommandTag) error {
			tag = ct
			return nil
		})
	})
	return tag, err
}

// queryRowWithoutFlush runs one statement that returns one row through
// sendWithoutFlush and scans the row into dest; no row is pgx.ErrNoRows.
func queryRowWithoutFlush(ctx context.Context, to batchSender, sql string, args []any, dest ...any) error {
	return sendWithoutFlush(ctx, to, func(b *pgx.Batch) {
		b.Queue(sql, args...).QueryRow(func(row pgx.Row) error { return row.Scan(dest...) })
	})
}
