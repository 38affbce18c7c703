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
	if _, err := db.Pool().Exec(ctx, `UPDATE outbox SET status = 'sent', sent_at = now(), platform_message_id = '7'`); err != nil {
		t.Fatal(err)
	}
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
