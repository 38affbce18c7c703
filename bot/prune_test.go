package bot_test

import (
	"context"
	"testing"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/storage/postgres"
)

// rowExists reports whether table holds the row id.
func rowExists(t *testing.T, db *postgres.DB, table string, id int64) bool {
	t.Helper()
	var n int
	if err := db.Pool().QueryRow(context.Background(), `SELECT count(*) FROM `+table+` WHERE id = $1`, id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// runUntilPruned runs a component (its Run, pruning on a short beat) until
// the row old is gone from table, and checks that the row kept stays.
func runUntilPruned(t *testing.T, db *postgres.DB, table string, run func(context.Context), old, kept int64, why string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	bot.WaitUntil(t, "the old row of "+table+" is pruned", func() bool { return !rowExists(t, db, table, old) })
	if !rowExists(t, db, table, kept) {
		t.Errorf("row %d of %s was pruned; it should stay: %s", kept, table, why)
	}
}

// checkPruneTakesTurns: while another replica holds lock, a pass skips
// (0 rows, no error); once it is free, the pass deletes want rows and gives
// the lock back.
func checkPruneTakesTurns(t *testing.T, db *postgres.DB, lock string, pass func(context.Context) (int, error), want int) {
	t.Helper()
	ctx := context.Background()
	other, led, err := db.TryLead(ctx, lock) // another replica's pass
	if err != nil || !led {
		t.Fatalf("TryLead = %v, %v; want the lock", led, err)
	}
	if n, err := pass(ctx); err != nil || n != 0 {
		t.Errorf("prune while another replica prunes = %d, %v; want 0, nil (skipped)", n, err)
	}
	if err := other.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := pass(ctx); err != nil || n != want {
		t.Errorf("prune once the other is done = %d, %v; want %d, nil", n, err, want)
	}
	again, led, err := db.TryLead(ctx, lock)
	if err != nil || !led {
		t.Fatalf("after a pass, TryLead = %v, %v; want the lock free", led, err)
	}
	_ = again.Release(ctx)
}
