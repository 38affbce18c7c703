package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// TestClaimsReadTheirBatchNotTheSentRows: with a backlog due (after an
// outage, say) a claim takes a batch of the oldest pending rows and reads
// about that many rows of the outbox, however many were sent before them
// (a week of them are kept). Ordered by id while its index ordered the due
// rows by time, the claim fetched every due row to sort them, or walked the
// primary key through every sent row to the first pending one.
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
