package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// openReplicas opens n pools on one throwaway database, as n replicas of
// the daemon would.
func openReplicas(t *testing.T, ctx context.Context, n int) []*postgres.DB {
	t.Helper()
	url := pgtest.New(t)
	dbs := make([]*postgres.DB, n)
	for i := range dbs {
		db, err := postgres.Open(ctx, url, postgres.Options{})
		if err != nil {
			t.Fatalf("open replica %d: %v", i, err)
		}
		t.Cleanup(db.Close)
		dbs[i] = db
	}
	return dbs
}

// advisoryHolders lists the backends of the current database that hold an
// advisory lock.
func advisoryHolders(t *testing.T, ctx context.Context, db *postgres.DB) []int32 {
	t.Helper()
	rows, err := db.Pool().Query(ctx, `SELECT pid FROM pg_locks
		WHERE locktype = 'advisory' AND granted
		  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`)
	if err != nil {
		t.Fatalf("list advisory lock holders: %v", err)
	}
	defer rows.Close()
	var pids []int32
	for rows.Next() {
		var pid int32
		if err := rows.Scan(&pid); err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return pids
}

func TestLeaderLockOneHolder(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dbs := openReplicas(t, ctx, 2)
	a, b := dbs[0], dbs[1]

	lease, ok, err := a.TryLead(ctx, "telegram:poll")
	if err != nil || !ok {
		t.Fatalf("first TryLead = %v, %v; want leadership", ok, err)
	}
	if _, ok, err := b.TryLead(ctx, "telegram:poll"); err != nil || ok {
		t.Fatalf("second replica's TryLead = %v, %v; want refused while a leads", ok, err)
	}
	if _, ok, err := a.TryLead(ctx, "telegram:poll"); err != nil || ok {
		t.Fatalf("same replica's second TryLead = %v, %v; want refused (another connection holds it)", ok, err)
	}
	other, ok, err := b.TryLead(ctx, "slack:other")
	if err != nil || !ok {
		t.Fatalf("TryLead of another key = %v, %v; want leadership", ok, err)
	}
	if err := other.Release(ctx); err != nil {
		t.Errorf("release other key: %v", err)
	}
	if err := lease.Check(ctx); err != nil {
		t.Fatalf("Check of a held lease: %v", err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if err := lease.Check(ctx); err == nil {
		t.Error("Check after Release = nil, want an error")
	}
	next, ok, err := b.TryLead(ctx, "telegram:poll")
	if err != nil || !ok {
		t.Fatalf("TryLead after release = %v, %v; want leadership", ok, err)
	}
	_ = next.Release(ctx)
}

// TestLeaderLockEndsWithItsConnection: terminating the holder's backend
// (a crash, a network cut, an admin) makes Check fail and frees the lock
// for another replica at once.
func TestLeaderLockEndsWithItsConnection(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dbs := openReplicas(t, ctx, 2)
	a, b := dbs[0], dbs[1]
	lease, ok, err := a.TryLead(ctx, "telegram:poll")
	if err != nil || !ok {
		t.Fatalf("TryLead = %v, %v; want leadership", ok, err)
	}
	defer lease.Release(ctx)
	holders := advisoryHolders(t, ctx, b)
	if len(holders) != 1 {
		t.Fatalf("advisory lock holders = %v, want exactly one", holders)
	}
	var killed bool
	if err := b.Pool().QueryRow(ctx, "SELECT pg_terminate_backend($1)", holders[0]).Scan(&killed); err != nil || !killed {
		t.Fatalf("pg_terminate_backend = %v, %v", killed, err)
	}
	start := time.Now()
	if err := lease.Check(ctx); err == nil {
		t.Fatal("Check after the holder's connection was terminated = nil, want an error")
	}
	var got bool
	for !got && time.Since(start) < 10*time.Second {
		if _, got, err = b.TryLead(ctx, "telegram:poll"); err != nil {
			t.Fatalf("TryLead after termination: %v", err)
		}
		if !got {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if !got {
		t.Fatal("the lock was not free 10s after its connection was terminated")
	}
	t.Logf("lock free %s after its holder's connection was terminated", time.Since(start))
	// Pools keep working: the terminated connection was never theirs.
	if err := a.Ping(ctx); err != nil {
		t.Errorf("replica a's pool after termination: %v", err)
	}
}
