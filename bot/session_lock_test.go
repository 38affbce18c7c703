package bot

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// scriptedLocker answers Obtain with errs in turn (nil: the lock), then
// with the lock.
type scriptedLocker struct {
	mu    sync.Mutex
	errs  []error
	calls int
}

func (l *scriptedLocker) Obtain(context.Context, string, time.Duration) (Lock, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls++
	if len(l.errs) > 0 {
		err := l.errs[0]
		l.errs = l.errs[1:]
		if err != nil {
			return nil, err
		}
	}
	return heldLock{}, nil
}

func (l *scriptedLocker) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls
}

type heldLock struct{}

func (heldLock) Refresh(context.Context, time.Duration) error { return nil }
func (heldLock) Release(context.Context) error                { return nil }

func locked(n int) []error {
	errs := make([]error, n)
	for i := range errs {
		errs[i] = ErrLocked
	}
	return errs
}

func TestObtainSessionLock(t *testing.T) {
	ctx := context.Background()
	t.Run("waits while another run holds it", func(t *testing.T) {
		l := &scriptedLocker{errs: locked(2)}
		lock, err := NewRouter(Options{Locker: l}).obtainSessionLock(ctx, "s", 10*time.Second)
		if err != nil || lock == nil {
			t.Fatalf("lock %v, err %v; want the lock", lock, err)
		}
		if n := l.count(); n != 3 {
			t.Errorf("Obtain called %d times, want 3", n)
		}
	})
	t.Run("a recovered run does not wait", func(t *testing.T) {
		l := &scriptedLocker{errs: locked(100)}
		_, err := NewRouter(Options{Locker: l}).obtainSessionLock(ctx, "s", 0)
		if !errors.Is(err, ErrLocked) {
			t.Fatalf("err %v, want ErrLocked", err)
		}
		if n := l.count(); n != 1 {
			t.Errorf("Obtain called %d times, want 1", n)
		}
	})
	t.Run("gives up after the wait", func(t *testing.T) {
		l := &scriptedLocker{errs: locked(1000)}
		_, err := NewRouter(Options{Locker: l}).obtainSessionLock(ctx, "s", time.Second)
		if !errors.Is(err, ErrLocked) {
			t.Fatalf("err %v, want ErrLocked", err)
		}
		if n := l.count(); n < 2 {
			t.Errorf("Obtain called %d times in a second, want it tried again", n)
		}
	})
	t.Run("Redis trouble runs unlocked", func(t *testing.T) {
		l := &scriptedLocker{errs: []error{errors.New("redis: connection refused")}}
		lock, err := NewRouter(Options{Locker: l}).obtainSessionLock(ctx, "s", 10*time.Second)
		if err != nil || lock != nil {
			t.Fatalf("lock %v, err %v; want no lock and no error", lock, err)
		}
	})
	t.Run("cancelled while waiting", func(t *testing.T) {
		l := &scriptedLocker{errs: locked(1000)}
		cctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(100*time.Millisecond, cancel)
		_, err := NewRouter(Options{Locker: l}).obtainSessionLock(cctx, "s", 10*time.Second)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v, want context.Canceled", err)
		}
	})
}
