package postgres_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// tableStats are a table's activity counts from pg_stat_user_tables.
type tableStats struct {
	SeqScans, IdxScans int64 // scans started
	Updated, HeapOnly  int64 // rows updated, and of those heap-only (HOT): no index entry written
	HeapBlocks         int64 // the table's pages read (from pg_statio_user_tables), cached or not
	RowsRead           int64 // live rows read by sequential scans and fetched by index scans
}

// readTableStats reads table's counts. db must have one connection: a
// backend publishes its counts when it goes idle, at most once a second
// unless asked to, so this asks, goes idle, then reads.
func readTableStats(t *testing.T, db *postgres.DB, table string) tableStats {
	t.Helper()
	ctx := context.Background()
	if _, err := db.Pool().Exec(ctx, `SELECT pg_stat_force_next_flush()`); err != nil {
		t.Fatal(err)
	}
	var st tableStats
	if err := db.Pool().QueryRow(ctx, `SELECT coalesce(s.seq_scan, 0), coalesce(s.idx_scan, 0), s.n_tup_upd, s.n_tup_hot_upd,
			io.heap_blks_hit + io.heap_blks_read, coalesce(s.seq_tup_read, 0) + coalesce(s.idx_tup_fetch, 0)
		FROM pg_stat_user_tables s JOIN pg_statio_user_tables io USING (relid)
		WHERE s.relname = $1`, table).Scan(&st.SeqScans, &st.IdxScans, &st.Updated, &st.HeapOnly, &st.HeapBlocks, &st.RowsRead); err != nil {
		t.Fatal(err)
	}
	return st
}

// Every message stored bumps its session row's last_seq and updated_at,
// twice per round (the user's message and the reply). Those bumps must be
// heap-only updates, which add nothing to the table's indexes (migration
// 17): with updated_at indexed they cost an entry in each of them.
func TestSessionBumpsWriteNoIndexEntries(t *testing.T) {
	ctx := context.Background()
	db := pgtest.OpenWith(t, ctx, postgres.Options{MaxConns: 1})
	claim := bot.Claim{Owner: "replica-1", Lease: time.Minute}
	const rounds = 20
	for i := range rounds {
		session := fmt.Sprintf("a/telegram:%d", i%4)
		seq, err := db.Append(ctx, session, agentcore.Message{
			Role: agentcore.RoleUser, Content: "hi", ExternalID: fmt.Sprint(i)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.InsertReply(ctx, session, seq, agentcore.Message{Role: agentcore.RoleAssistant, Content: "hello"},
			reply("", 0, "hello"), claim); err != nil {
			t.Fatal(err)
		}
	}
	st := readTableStats(t, db, "sessions")
	updated, heapOnly := st.Updated, st.HeapOnly
	// Each session's first append inserts its row; every later bump updates it.
	if want := int64(2*rounds - 4); updated != want {
		t.Fatalf("sessions: %d updates, want %d", updated, want)
	}
	if heapOnly != updated {
		t.Errorf("sessions: %d of %d updates were heap-only; the others wrote index entries", heapOnly, updated)
	}
}

// Migrations 17, 19 and 20 build their indexes concurrently, outside a
// transaction. They go down and up again, and an up that finds what an
// interrupted run left (the new index already there) still completes.
func TestConcurrentIndexMigrationsDownAndUpAfterAnInterruptedRun(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	provider, err := goose.NewProvider(goose.DialectPostgres, stdlib.OpenDBFromPool(db.Pool()), os.DirFS("migrations"),
		goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = provider.Close() })
	indexes := func() map[string]bool {
		rows, err := db.Pool().Query(ctx, `SELECT indexname FROM pg_indexes WHERE tablename IN ('sessions', 'outbox')`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]bool{}
		for rows.Next() {
			var name string
			if err := rows.Scan(&name); err != nil {
				t.Fatal(err)
			}
			out[name] = true
		}
		return out
	}
	check := func(when string, have, lack []string) {
		t.Helper()
		got := indexes()
		for _, name := range have {
			if !got[name] {
				t.Errorf("%s: index %s missing", when, name)
			}
		}
		for _, name := range lack {
			if got[name] {
				t.Errorf("%s: index %s still there", when, name)
			}
		}
	}
	newer := []string{"sessions_by_agent_idx", "outbox_pending_due_idx"}
	older := []string{"sessions_agent_idx", "outbox_status_next_attempt_idx"}
	// Migration 20 replaced 19's due index, which replaced 17's; going
	// down brings each back.
	check("after Migrate", []string{"sessions_by_agent_idx", "outbox_claim_idx"}, append([]string{"outbox_due_idx", "outbox_pending_due_idx"}, older...))
	if _, err := provider.DownTo(ctx, 19); err != nil {
		t.Fatalf("down to 19: %v", err)
	}
	check("at 19", []string{"sessions_by_agent_idx", "outbox_due_idx"}, append([]string{"outbox_claim_idx", "outbox_pending_due_idx"}, older...))
	if _, err := provider.DownTo(ctx, 17); err != nil {
		t.Fatalf("down to 17: %v", err)
	}
	check("at 17", newer, append([]string{"outbox_due_idx"}, older...))

	if _, err := provider.DownTo(ctx, 16); err != nil {
		t.Fatalf("down to 16: %v", err)
	}
	check("after down", older, newer)

	// An earlier run stopped after building the first index.
	if _, err := db.Pool().Exec(ctx, `CREATE INDEX sessions_by_agent_idx ON sessions (agent)`); err != nil {
		t.Fatal(err)
	}
	if _, err := provider.UpTo(ctx, 17); err != nil {
		t.Fatalf("up again: %v", err)
	}
	check("after up again", newer, older)

	// Migration 19's run stopped after building its index, before dropping
	// 17's: the next run completes it.
	if _, err := provider.UpTo(ctx, 18); err != nil {
		t.Fatalf("up to 18: %v", err)
	}
	if _, err := db.Pool().Exec(ctx, `CREATE INDEX outbox_due_idx ON outbox (next_attempt_at)
		WHERE status = 'pending' AND next_attempt_at IS NOT NULL`); err != nil {
		t.Fatal(err)
	}
	if _, err := provider.UpTo(ctx, 19); err != nil {
		t.Fatalf("up to 19 again: %v", err)
	}
	check("after 19 again", []string{"sessions_by_agent_idx", "outbox_due_idx"}, append([]string{"outbox_pending_due_idx"}, older...))

	// Migration 20's run stopped with its index half built (left invalid)
	// and 19's still there: the next run builds it anew and completes.
	if _, err := db.Pool().Exec(ctx, `CREATE INDEX outbox_claim_idx ON outbox (id, next_attempt_at)
		WHERE status = 'pending' AND next_attempt_at IS NOT NULL`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool().Exec(ctx, `UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'outbox_claim_idx'::regclass`); err != nil {
		t.Fatal(err)
	}
	if _, err := provider.UpTo(ctx, 20); err != nil {
		t.Fatalf("up to 20 again: %v", err)
	}
	check("after 20 again", []string{"sessions_by_agent_idx", "outbox_claim_idx"}, append([]string{"outbox_due_idx", "outbox_pending_due_idx"}, older...))
	var valid bool
	if err := db.Pool().QueryRow(ctx, `SELECT indisvalid FROM pg_index WHERE indexrelid = 'outbox_claim_idx'::regclass`).Scan(&valid); err != nil {
		t.Fatal(err)
	}
	if !valid {
		t.Error("after 20 again: outbox_claim_idx is still invalid")
	}
}
