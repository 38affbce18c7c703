package redis_test

import (
	"errors"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	sbredis "github.com/switchboard-chat/switchboard/storage/redis"
	"github.com/switchboard-chat/switchboard/storage/redis/redistest"
)

// shared opens stores on one Redis with one prefix, as replicas of one
// deployment do.
type shared struct {
	name string
	open func(t *testing.T) func(opts sbredis.Options) *sbredis.Store
}

var sharedBackends = []shared{
	{name: "real", open: func(t *testing.T) func(sbredis.Options) *sbredis.Store {
		url, prefix := redistest.URL(t), redistest.Prefix(t)
		return func(o sbredis.Options) *sbredis.Store { o.Prefix = prefix; return openStoreWith(t, url, o) }
	}},
	{name: "embedded", open: func(t *testing.T) func(sbredis.Options) *sbredis.Store {
		e, err := sbredis.StartEmbedded(nil)
		if err != nil {
			t.Fatalf("StartEmbedded: %v", err)
		}
		t.Cleanup(e.Close)
		return func(o sbredis.Options) *sbredis.Store { return openStoreWith(t, e.URL(), o) }
	}},
}

func openStoreWith(t *testing.T, url string, o sbredis.Options) *sbredis.Store {
	t.Helper()
	s, err := sbredis.Open(testContext(t), url, o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestLockOfCrashedInstanceIsTakenOver: when the holder's process dies
// (its heartbeat stops, its lock's TTL is far off) another instance gets
// the lock as soon as the heartbeat key expires, not when the lock would.
func TestLockOfCrashedInstanceIsTakenOver(t *testing.T) {
	for _, b := range sharedBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			open := b.open(t)
			const instanceTTL = 600 * time.Millisecond
			dead := open(sbredis.Options{InstanceTTL: instanceTTL})
			live := open(sbredis.Options{InstanceTTL: instanceTTL})
			ctx := testContext(t)
			held, err := dead.Obtain(ctx, "session:1", time.Hour)
			if err != nil {
				t.Fatalf("Obtain: %v", err)
			}
			if _, err := live.Obtain(ctx, "session:1", time.Hour); !errors.Is(err, bot.ErrLocked) {
				t.Fatalf("Obtain while the holder lives: error = %v, want bot.ErrLocked", err)
			}
			dead.StopHeartbeat() // kill -9
			crashed := time.Now()
			var lock bot.Lock
			for lock == nil && time.Since(crashed) < 10*time.Second {
				lock, err = live.Obtain(ctx, "session:1", time.Minute)
				if err != nil && !errors.Is(err, bot.ErrLocked) {
					t.Fatalf("Obtain while polling: %v", err)
				}
				if lock == nil {
					time.Sleep(50 * time.Millisecond)
				}
			}
			if lock == nil {
				t.Fatal("the lock of a crashed instance was not taken over within 10s")
			}
			t.Logf("taken over %s after the holder stopped beating (instance ttl %s)", time.Since(crashed), instanceTTL)
			if err := held.Refresh(ctx, time.Hour); !errors.Is(err, sbredis.ErrNotHeld) {
				t.Errorf("old holder's Refresh error = %v, want ErrNotHeld", err)
			}
			if err := held.Release(ctx); !errors.Is(err, sbredis.ErrNotHeld) {
				t.Errorf("old holder's Release error = %v, want ErrNotHeld", err)
			}
			if ttl, err := lock.(*sbredis.Lock).TTL(ctx); err != nil || ttl <= 0 {
				t.Errorf("new holder's TTL = %s, %v; want its lock untouched by the old holder", ttl, err)
			}
		})
	}
}

// TestLockOfLiveInstanceIsKept: a holder that keeps beating keeps its lock
// well past its instance TTL.
func TestLockOfLiveInstanceIsKept(t *testing.T) {
	for _, b := range sharedBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			open := b.open(t)
			// Generous: a heartbeat delayed by a busy machine must not look
			// like a death here.
			const instanceTTL = time.Second
			holder := open(sbredis.Options{InstanceTTL: instanceTTL})
			other := open(sbredis.Options{InstanceTTL: instanceTTL})
			ctx := testContext(t)
			if _, err := holder.Obtain(ctx, "session:1", time.Hour); err != nil {
				t.Fatalf("Obtain: %v", err)
			}
			for end := time.Now().Add(5 * instanceTTL / 2); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
				if _, err := other.Obtain(ctx, "session:1", time.Hour); !errors.Is(err, bot.ErrLocked) {
					t.Fatalf("Obtain of a live instance's lock: error = %v, want bot.ErrLocked", err)
				}
			}
			if alive, err := other.Alive(ctx, holder.Instance()); err != nil || !alive {
				t.Errorf("Alive(holder) = %v, %v; want true", alive, err)
			}
		})
	}
}

// TestLockFreedWhenHolderCloses: a store that shuts down cleanly removes
// its heartbeat, so the locks it did not release are free at once.
func TestLockFreedWhenHolderCloses(t *testing.T) {
	for _, b := range sharedBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			open := b.open(t)
			holder := open(sbredis.Options{})
			other := open(sbredis.Options{})
			ctx := testContext(t)
			if _, err := holder.Obtain(ctx, "session:1", time.Hour); err != nil {
				t.Fatalf("Obtain: %v", err)
			}
			if err := holder.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if _, err := other.Obtain(ctx, "session:1", time.Hour); err != nil {
				t.Errorf("Obtain after the holder closed: %v; want the lock", err)
			}
		})
	}
}

// TestHeartbeatOnlyWhileLocksAreHeld: an instance that holds no lock lets
// its heartbeat key expire (an idle daemon writes Redis no heartbeat); taking a
// lock sets it, and it is kept for as long as any lock is held.
func TestHeartbeatOnlyWhileLocksAreHeld(t *testing.T) {
	for _, b := range sharedBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			open := b.open(t)
			// Generous, as in TestLockOfLiveInstanceIsKept: a beat delayed
			// by a busy machine must not look like a lapse.
			const instanceTTL = time.Second
			s := open(sbredis.Options{InstanceTTL: instanceTTL})
			watcher := open(sbredis.Options{})
			ctx := testContext(t)
			alive := func() bool {
				t.Helper()
				ok, err := watcher.Alive(ctx, s.Instance())
				if err != nil {
					t.Fatal(err)
				}
				return ok
			}
			waitGone := func(what string) {
				t.Helper()
				for end := time.Now().Add(10 * time.Second); alive(); time.Sleep(50 * time.Millisecond) {
					if time.Now().After(end) {
						t.Fatalf("the heartbeat is still there 10 s after %s", what)
					}
				}
			}
			waitGone("Open, with no lock held")
			a, err := s.Obtain(ctx, "session:a", time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			bl, err := s.Obtain(ctx, "session:b", time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			held := func() {
				t.Helper()
				for end := time.Now().Add(3 * instanceTTL); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
					if !alive() {
						t.Fatal("the heartbeat lapsed while a lock was held")
					}
				}
			}
			held()
			if err := a.Release(ctx); err != nil {
				t.Fatal(err)
			}
			held() // b still is
			if err := bl.Release(ctx); err != nil {
				t.Fatal(err)
			}
			waitGone("the last lock was given back")
		})
	}
}
