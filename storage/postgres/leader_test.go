package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
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
		t.Fatalf("same replica's second TryLead = %v, %v; want refused (this replica already leads it)", ok, err)
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
	terminateHolder(t, ctx, b, 1)
	start := time.Now()
	if err := lease.Check(ctx); err == nil {
		t.Fatal("Check after the holder's connection was terminated = nil, want an error")
	}
	leadWhenFree(t, ctx, b, "telegram:poll")
	t.Logf("lock free %s after its holder's connection was terminated", time.Since(start))
	// Pools keep working: the terminated connection was never theirs.
	if err := a.Ping(ctx); err != nil {
		t.Errorf("replica a's pool after termination: %v", err)
	}
}

// distinctHolders counts the backends holding advisory locks.
func distinctHolders(t *testing.T, ctx context.Context, db *postgres.DB) (locks, backends int) {
	t.Helper()
	pids := advisoryHolders(t, ctx, db)
	seen := map[int32]bool{}
	for _, p := range pids {
		seen[p] = true
	}
	return len(pids), len(seen)
}

// terminateHolder terminates the backend holding the database's advisory
// locks, which must be locks of them, all on that one backend.
func terminateHolder(t *testing.T, ctx context.Context, db *postgres.DB, locks int) {
	t.Helper()
	holders := advisoryHolders(t, ctx, db)
	if len(holders) != locks {
		t.Fatalf("advisory lock holders = %v, want %d locks", holders, locks)
	}
	var killed bool
	if err := db.Pool().QueryRow(ctx, "SELECT pg_terminate_backend($1)", holders[0]).Scan(&killed); err != nil || !killed {
		t.Fatalf("pg_terminate_backend = %v, %v", killed, err)
	}
}

// leadWhenFree has db take key's leadership once the lock is free, within
// 10 s (a terminated backend ends its locks when it exits).
func leadWhenFree(t *testing.T, ctx context.Context, db *postgres.DB, key string) bot.Lease {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		l, ok, err := db.TryLead(ctx, key)
		if err != nil {
			t.Fatalf("TryLead %s: %v", key, err)
		}
		if ok {
			return l
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not free 10s after its holder's connection was terminated", key)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// terminateTwo terminates the backend holding leadTwo's locks (db is
// another replica) and checks that both leases' Checks fail, poll's first.
func terminateTwo(t *testing.T, ctx context.Context, db *postgres.DB, poll, gateway bot.Lease) {
	t.Helper()
	terminateHolder(t, ctx, db, 2)
	if err := poll.Check(ctx); err == nil {
		t.Fatal("Check of telegram:poll after its connection was terminated = nil, want an error")
	}
	if err := gateway.Check(ctx); err == nil {
		t.Fatal("Check of discord:gateway after the shared connection was terminated = nil, want an error")
	}
}

// replicaLeadingTwo opens two replicas on one throwaway database (see
// openReplicas); the first, a, leads telegram:poll and discord:gateway.
// ctx ends 30 s on, or with the test.
func replicaLeadingTwo(t *testing.T) (ctx context.Context, a, b *postgres.DB, poll, gateway bot.Lease) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	dbs := openReplicas(t, ctx, 2)
	poll, gateway = leadTwo(t, ctx, dbs[0])
	return ctx, dbs[0], dbs[1], poll, gateway
}

// leadTwo has db take the telegram:poll and discord:gateway leaderships.
func leadTwo(t *testing.T, ctx context.Context, db *postgres.DB) (poll, gateway bot.Lease) {
	t.Helper()
	var leases [2]bot.Lease
	for i, key := range []string{"telegram:poll", "discord:gateway"} {
		l, ok, err := db.TryLead(ctx, key)
		if err != nil || !ok {
			t.Fatalf("TryLead %s = %v, %v; want leadership", key, ok, err)
		}
		leases[i] = l
	}
	return leases[0], leases[1]
}

// TestLeaderLocksShareOneConnection: a replica's leaderships hold their
// locks on one backend, not one each; releasing one leaves the others held
// and frees its key for another replica at once; the last release closes
// the connection.
func TestLeaderLocksShareOneConnection(t *testing.T) {
	ctx, a, b, poll, gateway := replicaLeadingTwo(t)
	if locks, backends := distinctHolders(t, ctx, b); locks != 2 || backends != 1 {
		t.Fatalf("advisory locks %d on %d backends, want 2 on 1", locks, backends)
	}
	for _, key := range []string{"telegram:poll", "discord:gateway"} {
		if _, ok, err := b.TryLead(ctx, key); err != nil || ok {
			t.Fatalf("other replica's TryLead %s = %v, %v; want refused", key, ok, err)
		}
		if _, ok, err := a.TryLead(ctx, key); err != nil || ok {
			t.Fatalf("same replica's second TryLead %s = %v, %v; want refused", key, ok, err)
		}
	}
	if err := poll.Release(ctx); err != nil {
		t.Fatalf("Release telegram:poll: %v", err)
	}
	if err := gateway.Check(ctx); err != nil {
		t.Fatalf("Check of discord:gateway after telegram:poll was released: %v", err)
	}
	taken, ok, err := b.TryLead(ctx, "telegram:poll")
	if err != nil || !ok {
		t.Fatalf("other replica's TryLead right after the release = %v, %v; want leadership", ok, err)
	}
	defer taken.Release(ctx)
	if err := gateway.Release(ctx); err != nil {
		t.Fatalf("Release discord:gateway: %v", err)
	}
	if err := gateway.Release(ctx); err != nil {
		t.Errorf("second Release = %v, want nil", err)
	}
	if locks, backends := distinctHolders(t, ctx, b); locks != 1 || backends != 1 {
		t.Fatalf("after a released both: advisory locks %d on %d backends, want b's 1 on 1", locks, backends)
	}
	// The lock session's backend, whose last statement was the unlock,
	// goes: its connection was closed. (A backend exits once it reads the
	// close; wait for that, bounded.)
	deadline := time.Now().Add(10 * time.Second)
	for {
		var sessions int
		if err := b.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid()
			  AND query LIKE 'SELECT pg_advisory_unlock%'`).Scan(&sessions); err != nil {
			t.Fatal(err)
		}
		if sessions == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d backends still show the last unlock 10s later: the lock session was not closed", sessions)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLeaderLocksEndTogether: the backend holding a replica's locks is
// terminated; every lease's Check fails, the keys are free for another
// replica, and the replica leads again later on a new connection.
func TestLeaderLocksEndTogether(t *testing.T) {
	ctx, a, b, poll, gateway := replicaLeadingTwo(t)
	terminateTwo(t, ctx, b, poll, gateway)
	_ = poll.Release(ctx) // what the leader does after a failed Check
	_ = gateway.Release(ctx)
	var taken []bot.Lease
	for _, key := range []string{"telegram:poll", "discord:gateway"} {
		taken = append(taken, leadWhenFree(t, ctx, b, key))
	}
	for _, l := range taken {
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	again, ok, err := a.TryLead(ctx, "telegram:poll")
	if err != nil || !ok {
		t.Fatalf("TryLead on a new connection = %v, %v; want leadership", ok, err)
	}
	if err := again.Check(ctx); err != nil {
		t.Fatalf("Check on the new connection: %v", err)
	}
	_ = again.Release(ctx)
}

// TestLeaderLockCheckGivenUpKeepsTheOthers: a caller that gives up on its
// Check (its task ended, its context cancelled) must not end the lock
// session the replica's other leaderships hold their locks on.
func TestLeaderLockCheckGivenUpKeepsTheOthers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a := openReplicas(t, ctx, 1)[0]
	poll, gateway := leadTwo(t, ctx, a)
	defer poll.Release(ctx)
	defer gateway.Release(ctx)
	gone, stop := context.WithCancel(ctx)
	stop()
	_ = poll.Check(gone)
	if err := gateway.Check(ctx); err != nil {
		t.Fatalf("Check of discord:gateway after telegram:poll's Check was given up: %v", err)
	}
	if locks, backends := distinctHolders(t, ctx, a); locks != 2 || backends != 1 {
		t.Fatalf("advisory locks %d on %d backends, want 2 on 1", locks, backends)
	}
}

// TestLeaderLocksShareTheirChecks: one query confirms every lock of a
// replica's lock session, so a Check right after another leadership's
// makes none; a lease never relies on its own last check, so a lock that
// is gone is still noticed by the next Check of the lease that checked
// last.
func TestLeaderLocksShareTheirChecks(t *testing.T) {
	ctx, _, b, poll, gateway := replicaLeadingTwo(t)
	defer poll.Release(ctx)
	defer gateway.Release(ctx)
	holder := advisoryHolders(t, ctx, b)[0]
	lastQuery := func() time.Time {
		t.Helper()
		var at time.Time
		if err := b.Pool().QueryRow(ctx, `SELECT query_start FROM pg_stat_activity WHERE pid = $1`, holder).Scan(&at); err != nil {
			t.Fatal(err)
		}
		return at
	}
	check := func(name string, l bot.Lease) {
		t.Helper()
		if err := l.Check(ctx); err != nil {
			t.Fatalf("Check of %s: %v", name, err)
		}
	}
	check("telegram:poll", poll)
	polled := lastQuery()
	check("discord:gateway", gateway)
	if got := lastQuery(); !got.Equal(polled) {
		t.Fatalf("discord:gateway's Check right after telegram:poll's queried again (at %v, after %v); want it to rely on that check", got, polled)
	}
	check("telegram:poll", poll)
	if got := lastQuery(); !got.After(polled) {
		t.Fatal("telegram:poll's second Check right after its first made no query; want a lease never to rely on its own last check")
	}
	terminateTwo(t, ctx, b, poll, gateway)
}
