package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// TestClaimsPassSentRowsOnce: every reply's outbox row enters the due
// index pending and is marked sent moments later, leaving an index entry
// that points at a dead row until a vacuum (autovacuum waits for a fifth
// of the table, or is off). A claim must mark such entries dead as it
// passes them, so that the next claim, a second later, skips them without
// reading the table: a bitmap scan visited every one's page on every
// claim (docs/benchmarks.md, twenty-second round).
func TestClaimsPassSentRowsOnce(t *testing.T) {
	ctx := context.Background()
	db := pgtest.OpenWith(t, ctx, postgres.Options{MaxConns: 1}) // one backend: its counts, and no older snapshot keeps the rows alive
	if _, err := db.Pool().Exec(ctx, `INSERT INTO outbox (platform, chat_id, text)
		SELECT 'telegram', g::text, 'a reply of some length to fill the pages like real ones' FROM generate_series(1, 3000) g`); err != nil {
		t.Fatal(err)
	}
	var sentBy int64 // the transaction that marks them sent
	if err := db.Pool().QueryRow(ctx, `WITH u AS (UPDATE outbox SET status = 'sent', sent_at = now(), platform_message_id = '7')
		SELECT pg_current_xact_id()::text::bigint`).Scan(&sentBy); err != nil {
		t.Fatal(err)
	}
	// A claim marks an entry dead only when no snapshot can still see its
	// row. The claim's own snapshot starts at the oldest transaction then
	// running in any database of the server — another package's tests run
	// beside this one — so wait until none older than the update runs.
	waitFor(t, "the transactions older than the update to end", func() bool {
		var oldest int64
		if err := db.Pool().QueryRow(ctx, `SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint`).Scan(&oldest); err != nil {
			t.Fatal(err)
		}
		return oldest > sentBy
	})
	claim := func() int {
		t.Helper()
		msgs, err := db.Claim(ctx, "replica-1", 100, time.Minute, false)
		if err != nil {
			t.Fatal(err)
		}
		return len(msgs)
	}
	if n := claim(); n != 0 {
		t.Fatalf("claimed %d sent rows", n)
	}
	before := readTableStats(t, db, "outbox").HeapBlocks
	if n := claim(); n != 0 {
		t.Fatalf("claimed %d sent rows", n)
	}
	if read := readTableStats(t, db, "outbox").HeapBlocks - before; read > 2 {
		t.Errorf("a claim with nothing due read %d pages of the outbox for 3 000 rows sent before the previous claim; want it to skip their index entries", read)
	}

	// A due row behind them is still found.
	var id int64
	if err := db.Pool().QueryRow(ctx, `INSERT INTO outbox (platform, chat_id, text) VALUES ('telegram', '1', 'due') RETURNING id`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	msgs, err := db.Claim(ctx, "replica-1", 100, time.Minute, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || msgs[0].ID != id {
		t.Fatalf("claimed %+v; want the one due row %d", msgs, id)
	}
}

// TestClaimsReadTheirBatchNotTheSentRows: with a backlog due (after an
// outage, say) a claim takes a batch of the oldest pending rows and reads
// about that many rows of the outbox, however many were sent before them
// (a week of them are kept). Ordered by id while its index ordered the due
// rows by time, the claim fetched every due row to sort them, or walked the
// primary key through every sent row to the first pending one
// (docs/benchmarks.md, twenty-second round).
func TestClaimsReadTheirBatchNotTheSentRows(t *testing.T) {
	ctx := context.Background()
	db := pgtest.OpenWith(t, ctx, postgres.Options{MaxConns: 1})
	for _, sql := range []string{
		`INSERT INTO outbox (platform, chat_id, text, status, sent_at)
			SELECT 'telegram', (g % 50)::text, 'a reply', 'sent', now() FROM generate_series(1, 40000) g`,
		`INSERT INTO outbox (platform, chat_id, text)
			SELECT 'telegram', (g % 50)::text, 'a reply' FROM generate_series(1, 3000) g`,
		`ANALYZE outbox`, // statistics that see the backlog, as autovacuum's would
	} {
		if _, err := db.Pool().Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	var oldest int64
	if err := db.Pool().QueryRow(ctx, `SELECT min(id) FROM outbox WHERE status = 'pending'`).Scan(&oldest); err != nil {
		t.Fatal(err)
	}
	for batch := range 3 {
		before := readTableStats(t, db, "outbox").RowsRead
		msgs, err := db.Claim(ctx, "replica-1", 100, time.Minute, false)
		if err != nil {
			t.Fatal(err)
		}
		read := readTableStats(t, db, "outbox").RowsRead - before
		first := oldest + int64(100*batch)
		if len(msgs) != 100 || msgs[0].ID != first || msgs[99].ID != first+99 {
			t.Fatalf("batch %d: claimed %d rows; want the 100 oldest pending ones from %d", batch, len(msgs), first)
		}
		// The scan passes the rows of the earlier batches, still claimed
		// (pending until sent), then finds 100; the update reads those 100.
		if want := int64(100*batch + 200); read > want+100 {
			t.Errorf("batch %d: claiming 100 rows read %d rows of the outbox (40 000 sent, 3 000 pending); want about %d", batch, read, want)
		}
	}
}
