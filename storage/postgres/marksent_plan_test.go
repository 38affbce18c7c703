package postgres_test

import (
	"context"
	"testing"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// TestMarkingSentNeverScansTheOutbox: MarkSentAll finds its rows by id
// however much the outbox grew since the statement was first run on the
// connection. PostgreSQL plans a prepared statement for its parameters'
// values five times, then may settle on one plan for any values, made for
// the table as it was then: for a nearly empty outbox a sequential scan. It
// keeps that plan until something analyzes the table (autovacuum, which may
// be off or not have run yet), and every batch of marks then reads the
// whole outbox (docs/benchmarks.md, twenty-first round).
func TestMarkingSentNeverScansTheOutbox(t *testing.T) {
	ctx := context.Background()
	db := pgtest.OpenWith(t, ctx, postgres.Options{MaxConns: 1}) // one connection: one plan cache
	rows := func(n int) []int64 {
		t.Helper()
		return column[int64](t, ctx, db, `INSERT INTO outbox (platform, chat_id, text)
			SELECT 'telegram', '1', 'hi' FROM generate_series(1, $1) RETURNING id`, n)
	}
	mark := func(ids []int64) {
		t.Helper()
		for len(ids) > 0 {
			n := min(len(ids), 3)
			sent := make([]bot.Sent, n)
			for i, id := range ids[:n] {
				sent[i] = bot.Sent{OutboxRow: bot.OutboxRow{ID: id}, PlatformMessageID: "7"}
			}
			if err := db.MarkSentAll(ctx, sent); err != nil {
				t.Fatal(err)
			}
			ids = ids[n:]
		}
	}
	mark(rows(30)) // ten batches while the outbox is nearly empty
	rows(5000)
	later := rows(30)
	before := readTableStats(t, db, "outbox").SeqScans
	mark(later)
	if scans := readTableStats(t, db, "outbox").SeqScans - before; scans > 0 {
		t.Errorf("marking 30 rows in 10 batches scanned the whole outbox %d times; want it to find each row by its id", scans)
	}
	var pending int
	if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM outbox WHERE id = ANY($1) AND status <> 'sent'`, later).Scan(&pending); err != nil {
		t.Fatal(err)
	}
	if pending > 0 {
		t.Errorf("%d of the 30 rows are not marked sent", pending)
	}
}
