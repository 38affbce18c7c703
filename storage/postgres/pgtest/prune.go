package pgtest

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/storage/postgres"
)

// RowExists reports whether table holds the row id.
func RowExists(t *testing.T, db *postgres.DB, table string, id int64) bool {
	t.Helper()
	var n int
	if err := db.Pool().QueryRow(context.Background(), `SELECT count(*) FROM `+table+` WHERE id = $1`, id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// RunUntilPruned runs a component that prunes table (its Run, pruning on a
// short interval) until the row old is gone, failing the test after 10 s, and
// checks that the row kept stays (why says why it must).
func RunUntilPruned(t *testing.T, db *postgres.DB, table string, run func(context.Context), old, kept int64, why string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(10 * time.Second)
	for RowExists(t, db, table, old) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after 10s waiting until the old row %d of %s is pruned", old, table)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !RowExists(t, db, table, kept) {
		t.Errorf("row %d of %s was pruned; it should stay: %s", kept, table, why)
	}
}

// CheckPruneTakesTurns checks that replicas take turns pruning: while
// another replica holds lock, a pass skips (0 rows, no error); once it is
// free, the pass deletes want rows and gives the lock back.
func CheckPruneTakesTurns(t *testing.T, db *postgres.DB, lock string, pass func(context.Context) (int, error), want int) {
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
