package leader_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/leader"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// taskConcurrency counts how many replicas run a task at once.
type taskConcurrency struct{ running, max, runs atomic.Int32 }

func (c *taskConcurrency) task(ctx context.Context) error {
	n := c.running.Add(1)
	c.runs.Add(1)
	for {
		if m := c.max.Load(); n <= m || c.max.CompareAndSwap(m, n) {
			break
		}
	}
	<-ctx.Done()
	c.running.Add(-1)
	return nil
}

// opener returns a func that opens a store, a pool of its own as each
// replica has, on one fresh test database.
func opener(t *testing.T) func() *postgres.DB {
	url := pgtest.New(t)
	return func() *postgres.DB {
		db, err := postgres.Open(context.Background(), url, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		return db
	}
}

// TestLeaderOneAtATime: two replicas compete for one task through a
// PostgreSQL advisory lock; only one runs it at any moment, and when the
// leader stops the other takes over.
func TestLeaderOneAtATime(t *testing.T) {
	ctx := context.Background()
	open := opener(t)
	var c taskConcurrency
	logs := &channeltest.Log{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	a := &leader.Leader{Lock: open(), Key: "leader:test", Interval: 200 * time.Millisecond, Logger: log}
	b := &leader.Leader{Lock: open(), Key: "leader:test", Interval: 200 * time.Millisecond, Logger: log}
	ctxA, stopA := context.WithCancel(ctx)
	ctxB, stopB := context.WithCancel(ctx)
	defer stopA()
	defer stopB()
	doneA, doneB := make(chan struct{}), make(chan struct{})
	go func() { a.Run(ctxA, c.task); close(doneA) }()
	go func() { b.Run(ctxB, c.task); close(doneB) }()

	channeltest.WaitUntil(t, "one replica leads", func() bool { return a.Held() || b.Held() })
	time.Sleep(time.Second) // several check periods with both competing
	if a.Held() == b.Held() {
		t.Fatalf("exactly one replica must lead: a=%v b=%v", a.Held(), b.Held())
	}
	if a.Standby() != b.Held() || b.Standby() != a.Held() {
		t.Fatalf("the replica that does not lead must know another does: a held=%v standby=%v, b held=%v standby=%v",
			a.Held(), a.Standby(), b.Held(), b.Standby())
	}
	if c.max.Load() != 1 {
		t.Fatalf("the task ran on %d replicas at once", c.max.Load())
	}
	if n := strings.Count(logs.String(), "another replica leads"); n != 1 {
		t.Errorf("%q logged %d times, want once:\n%s", "another replica leads", n, logs)
	}
	leader, standby, stopLeader, leaderDone := a, b, stopA, doneA
	if b.Held() {
		leader, standby, stopLeader, leaderDone = b, a, stopB, doneB
	}
	stopLeader()
	<-leaderDone
	if leader.Held() {
		t.Error("a stopped leader still reports Held")
	}
	channeltest.WaitUntil(t, "the standby replica takes over", standby.Held)
	if standby.Standby() {
		t.Error("the new leader still reports Standby")
	}
	if c.max.Load() != 1 || c.runs.Load() < 2 {
		t.Fatalf("max concurrent %d, runs %d", c.max.Load(), c.runs.Load())
	}
}

// TestLeaderStepsDownWhenItsConnectionDies: terminating the leader's
// PostgreSQL connection makes it step down within a check period, and the
// other replica takes over; the task never runs twice at once.
func TestLeaderStepsDownWhenItsConnectionDies(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	open := opener(t)
	var c taskConcurrency
	logs := &channeltest.Log{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	admin := open()
	a := &leader.Leader{Lock: open(), Key: "leader:test", Interval: 200 * time.Millisecond, Logger: log.With("replica", "a")}
	b := &leader.Leader{Lock: open(), Key: "leader:test", Interval: 200 * time.Millisecond, Logger: log.With("replica", "b")}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Add(1)
	go func() { defer wg.Done(); a.Run(ctx, c.task) }()
	channeltest.WaitUntil(t, "a leads", a.Held)
	wg.Add(1)
	go func() { defer wg.Done(); b.Run(ctx, c.task) }()
	channeltest.WaitUntil(t, "b stands by", func() bool { return strings.Contains(logs.String(), "replica=b") })

	var pid int32
	err := admin.Pool().QueryRow(ctx, `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&pid)
	if err != nil {
		t.Fatalf("find the leader's backend: %v", err)
	}
	if _, err := admin.Pool().Exec(ctx, "SELECT pg_terminate_backend($1)", pid); err != nil {
		t.Fatalf("pg_terminate_backend: %v", err)
	}
	killed := time.Now()
	channeltest.WaitUntil(t, "b takes over", b.Held)
	t.Logf("b leads %s after a's connection was terminated", time.Since(killed))
	if c.max.Load() != 1 {
		t.Errorf("the task ran on %d replicas at once", c.max.Load())
	}
	if !strings.Contains(logs.String(), "leader lock lost; stepping down") {
		t.Errorf("a did not log stepping down:\n%s", logs)
	}
}

// downLeaderLock is a LeaderLock whose service is down until up is set.
type downLeaderLock struct {
	up    atomic.Bool
	calls atomic.Int32
}

func (u *downLeaderLock) TryLead(context.Context, string) (bot.Lease, bool, error) {
	u.calls.Add(1)
	if !u.up.Load() {
		return nil, false, context.DeadlineExceeded
	}
	return heldLease{}, true, nil
}

type heldLease struct{}

func (heldLease) Check(context.Context) error   { return nil }
func (heldLease) Release(context.Context) error { return nil }

// TestLeaderLogsOutageOnce: while the lock service is down the leader
// retries quietly, with one warning for the outage and one line when it is
// back.
func TestLeaderLogsOutageOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &channeltest.Log{}
	lock := &downLeaderLock{}
	l := &leader.Leader{Lock: lock, Key: "leader:test", Interval: 10 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(logs, nil))}
	done := make(chan struct{})
	go func() { l.Run(ctx, func(ctx context.Context) error { <-ctx.Done(); return nil }); close(done) }()
	channeltest.WaitUntil(t, "10 failed attempts", func() bool { return lock.calls.Load() >= 10 })
	lock.up.Store(true)
	channeltest.WaitUntil(t, "leading after the outage", l.Held)
	cancel()
	<-done
	out := logs.String()
	if n := strings.Count(out, "leader lock unavailable"); n != 1 {
		t.Errorf("outage warning logged %d times over %d attempts, want once:\n%s", n, lock.calls.Load(), out)
	}
	if n := strings.Count(out, "leader lock available again"); n != 1 {
		t.Errorf("recovery line logged %d times, want once:\n%s", n, out)
	}
}

// fadingLock is a LeaderLock of one key held in memory. fade ends the
// holder's lock without it knowing, as a dead connection does: the lock is
// free at once, and the old holder's next Check reports the loss only after
// checkTakes.
type fadingLock struct {
	mu         sync.Mutex
	holder     *fadingLease
	checkTakes time.Duration
}

type fadingLease struct {
	lock  *fadingLock
	faded atomic.Bool
}

func (f *fadingLock) TryLead(context.Context, string) (bot.Lease, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.holder != nil {
		return nil, false, nil
	}
	f.holder = &fadingLease{lock: f}
	return f.holder, true, nil
}

func (f *fadingLock) fade() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.holder.faded.Store(true)
	f.holder = nil
}

func (l *fadingLease) Check(ctx context.Context) error {
	if !l.faded.Load() {
		return nil
	}
	select {
	case <-time.After(l.lock.checkTakes):
	case <-ctx.Done():
	}
	return errors.New("lock lost")
}

func (l *fadingLease) Release(context.Context) error {
	l.lock.mu.Lock()
	defer l.lock.mu.Unlock()
	if l.lock.holder == l {
		l.lock.holder = nil
	}
	return nil
}

// TestLeaderTakeoverWaitsForTheOldLeader: when a leader's lock ends without
// it knowing, the replica standing by gets the lock at its next ask, but
// runs the task only after the old leader has checked its lease and
// stopped, even when that check is slow to fail.
func TestLeaderTakeoverWaitsForTheOldLeader(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const interval = 100 * time.Millisecond
	lock := &fadingLock{checkTakes: interval / 3}
	var c taskConcurrency
	a := &leader.Leader{Lock: lock, Key: "leader:test", Interval: interval}
	b := &leader.Leader{Lock: lock, Key: "leader:test", Interval: interval}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() { a.Run(ctx, c.task) })
	channeltest.WaitUntil(t, "a leads", a.Held)
	wg.Go(func() { b.Run(ctx, c.task) })
	channeltest.WaitUntil(t, "b stands by", b.Standby)
	for range 3 {
		leader, standby := a, b
		if b.Held() {
			leader, standby = b, a
		}
		// Meanwhile the standby stays ready: it reports Standby until it
		// Holds.
		gaps := make(chan int)
		sampling, stopSampling := context.WithCancel(ctx)
		go func() {
			n := 0
			for sampling.Err() == nil {
				if !standby.Held() && !standby.Standby() {
					n++
				}
				time.Sleep(time.Millisecond)
			}
			gaps <- n
		}()
		lock.fade()
		channeltest.WaitUntil(t, "the standby takes over", standby.Held)
		stopSampling()
		if n := <-gaps; n > 0 {
			t.Errorf("the replica taking over reported neither Held nor Standby %d times", n)
		}
		if leader.Held() {
			t.Fatal("the old leader still leads after the standby took over")
		}
		if c.max.Load() != 1 {
			t.Fatalf("the task ran on %d replicas at once", c.max.Load())
		}
		channeltest.WaitUntil(t, "the old leader stands by", leader.Standby)
	}
}
