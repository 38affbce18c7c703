package redis_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	sbredis "github.com/switchboard-chat/switchboard/storage/redis"
)

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// obtained is what one Obtain of a group came back with.
type obtained struct {
	lock bot.Lock
	err  error
}

// obtainBehindHeld makes s's first Obtain (of "first") wait in flight
// until gate closes, then queues an Obtain of each key, in order, each with
// its own context, and calls queued (when set); it returns what each came
// back with once gate closes and all returned.
func obtainBehindHeld(t *testing.T, s *sbredis.Store, gate chan struct{}, w *sbredis.ScriptWatch, keys []string, ctxs []context.Context, queued func()) []obtained {
	t.Helper()
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := s.Obtain(testContext(t), "first", time.Minute); err != nil {
			t.Errorf("the first Obtain: %v", err)
		}
	})
	waitFor(t, "the first obtain in flight", func() bool { return len(w.Calls()) == 1 })
	out := make([]obtained, len(keys))
	for i, key := range keys {
		wg.Go(func() {
			l, err := s.Obtain(ctxs[i], key, time.Minute)
			out[i] = obtained{l, err}
		})
		waitFor(t, key+" to queue", func() bool { return s.ObtainsWaiting() == i+1 })
	}
	if queued != nil {
		queued()
	}
	close(gate)
	wg.Wait()
	return out
}

func contexts(t *testing.T, n int) []context.Context {
	ctxs := make([]context.Context, n)
	for i := range ctxs {
		ctxs[i] = testContext(t)
	}
	return ctxs
}

// Obtains made while one is in flight go to Redis in one script call and
// get what each would alone: a free lock, one held by a live instance
// refused, one of a gone instance taken over, and the second of two asks
// for one key refused.
func TestObtainsMadeTogetherGoInOneCall(t *testing.T) {
	for _, b := range sharedBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			open := b.open(t)
			const instanceTTL = 600 * time.Millisecond
			s := open(sbredis.Options{InstanceTTL: instanceTTL})
			live := open(sbredis.Options{InstanceTTL: instanceTTL})
			dead := open(sbredis.Options{InstanceTTL: instanceTTL})
			ctx := testContext(t)
			for _, key := range []string{"dead", "probe"} {
				if _, err := dead.Obtain(ctx, key, time.Hour); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := live.Obtain(ctx, "held", time.Hour); err != nil {
				t.Fatal(err)
			}
			dead.StopHeartbeat() // kill -9
			waitFor(t, "the dead instance's heartbeat to expire", func() bool {
				l, err := live.Obtain(ctx, "probe", time.Minute)
				return err == nil && l != nil
			})

			gate := make(chan struct{})
			w := s.WatchObtains(gate, sbredis.FailGroups{})
			keys := []string{"a", "b", "held", "dead", "a"}
			got := obtainBehindHeld(t, s, gate, w, keys, contexts(t, len(keys)), nil)

			calls := w.Calls()
			if len(calls) != 2 || calls[0].Many || !calls[1].Many {
				t.Fatalf("script calls %+v; want the first alone, then the rest in one", calls)
			}
			var locks []string
			for _, k := range calls[1].Keys[1:] { // after the heartbeat
				if i := strings.Index(k, "lock:"); i >= 0 {
					locks = append(locks, k[i:])
				}
			}
			if want := []string{"lock:a", "lock:b", "lock:held", "lock:dead", "lock:a"}; !slices.Equal(locks, want) {
				t.Errorf("the group's locks %q; want %q", calls[1].Keys, want)
			}
			for i, key := range keys {
				refused := i == 2 || i == 4
				if refused != errors.Is(got[i].err, bot.ErrLocked) || (!refused && (got[i].err != nil || got[i].lock == nil)) {
					t.Errorf("Obtain %d (%s) = %v, %v; want refused: %v", i, key, got[i].lock, got[i].err, refused)
				}
			}
			// Held in Redis, not only said to be.
			for _, key := range []string{"a", "b", "dead"} {
				if _, err := live.Obtain(ctx, key, time.Minute); !errors.Is(err, bot.ErrLocked) {
					t.Errorf("another instance's Obtain of %s: %v; want bot.ErrLocked", key, err)
				}
			}
			if err := got[0].lock.Release(ctx); err != nil {
				t.Errorf("Release of a grouped lock: %v", err)
			}
		})
	}
}

// When the group's script call fails, each of its obtains runs alone and
// gets its lock: also when the call ran in Redis and only its answer was
// lost, so the locks are already held with the values the retries ask for.
func TestAFailedGroupOfObtainsRunsEachAlone(t *testing.T) {
	for _, b := range backends {
		for _, fail := range []sbredis.FailGroups{{N: 1}, {N: 1, AfterRedis: true}} {
			t.Run(fmt.Sprintf("%s/after redis %v", b.name, fail.AfterRedis), func(t *testing.T) {
				t.Parallel()
				s := b.open(t)
				gate := make(chan struct{})
				w := s.WatchObtains(gate, fail)
				keys := []string{"a", "b"}
				got := obtainBehindHeld(t, s, gate, w, keys, contexts(t, len(keys)), nil)
				calls := w.Calls()
				if len(calls) != 4 || !calls[1].Many || calls[2].Many || calls[3].Many {
					t.Errorf("script calls %+v; want one alone, the failed group, then one alone each", calls)
				}
				ctx := testContext(t)
				for i, o := range got {
					if o.err != nil || o.lock == nil {
						t.Errorf("Obtain of %s: %v", keys[i], o.err)
						continue
					}
					if _, err := s.Obtain(ctx, keys[i], time.Minute); !errors.Is(err, bot.ErrLocked) {
						t.Errorf("Obtain of %s while held: %v; want bot.ErrLocked", keys[i], err)
					}
					if err := o.lock.Release(ctx); err != nil {
						t.Errorf("Release of %s: %v (the lock does not hold the value its Obtain returned)", keys[i], err)
					}
				}
			})
		}
	}
}

// A lock taken in a group for a caller that gave up meanwhile is given
// back, not left held until its TTL.
func TestALockObtainedForACallerThatGaveUpIsGivenBack(t *testing.T) {
	for _, b := range sharedBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			open := b.open(t)
			s, other := open(sbredis.Options{}), open(sbredis.Options{})
			gate := make(chan struct{})
			w := s.WatchObtains(gate, sbredis.FailGroups{})
			ctxs := contexts(t, 2)
			gone, giveUp := context.WithCancel(ctxs[0])
			ctxs[0] = gone
			keys := []string{"gone", "b"}
			got := obtainBehindHeld(t, s, gate, w, keys, ctxs, giveUp)
			if !errors.Is(got[0].err, context.Canceled) || got[0].lock != nil {
				t.Errorf("the caller that gave up got %v, %v; want context.Canceled", got[0].lock, got[0].err)
			}
			if got[1].err != nil {
				t.Errorf("the other caller got %v", got[1].err)
			}
			ctx := testContext(t)
			waitFor(t, "the lock to be given back", func() bool {
				l, err := other.Obtain(ctx, "gone", time.Minute)
				return err == nil && l != nil
			})
		})
	}
}
