package redis

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bsm/redislock"

	"github.com/switchboard-chat/switchboard/bot"
)

// ErrNotHeld is returned by Lock.Refresh and Lock.Release when the lock
// expired or was taken by someone else.
var ErrNotHeld = errors.New("lock no longer held (it expired or another holder took it)")

// Obtain takes the lock key for ttl. When someone else holds it, the error
// matches bot.ErrLocked (and redislock.ErrNotObtained) with errors.Is.
// Keys live under <prefix>lock:<key>.
func (s *Store) Obtain(ctx context.Context, key string, ttl time.Duration) (bot.Lock, error) {
	if ttl <= 0 {
		return nil, fmt.Errorf("obtain lock %q: ttl %s must be positive", key, ttl)
	}
	l, err := s.locks.Obtain(ctx, "lock:"+key, ttl, nil)
	if errors.Is(err, redislock.ErrNotObtained) {
		return nil, fmt.Errorf("obtain lock %q: %w: %w", key, bot.ErrLocked, err)
	}
	if err != nil {
		return nil, fmt.Errorf("obtain lock %q: %w", key, err)
	}
	return &Lock{lock: l, key: key}, nil
}

// Lock is a held Redis lock; it implements bot.Lock.
type Lock struct {
	lock *redislock.Lock
	key  string
}

var _ bot.Lock = (*Lock)(nil)

// Refresh extends the lock to ttl from now. It fails with ErrNotHeld when
// the lock was lost.
func (l *Lock) Refresh(ctx context.Context, ttl time.Duration) error {
	if ttl <= 0 {
		return fmt.Errorf("refresh lock %q: ttl %s must be positive", l.key, ttl)
	}
	err := l.lock.Refresh(ctx, ttl, nil)
	if errors.Is(err, redislock.ErrNotObtained) {
		return fmt.Errorf("refresh lock %q: %w", l.key, ErrNotHeld)
	}
	if err != nil {
		return fmt.Errorf("refresh lock %q: %w", l.key, err)
	}
	return nil
}

// Release gives the lock back. It fails with ErrNotHeld when the lock was
// already lost.
func (l *Lock) Release(ctx context.Context) error {
	err := l.lock.Release(ctx)
	if errors.Is(err, redislock.ErrLockNotHeld) {
		return fmt.Errorf("release lock %q: %w", l.key, ErrNotHeld)
	}
	if err != nil {
		return fmt.Errorf("release lock %q: %w", l.key, err)
	}
	return nil
}

// TTL returns how long the lock is still held; 0 when it was lost.
func (l *Lock) TTL(ctx context.Context) (time.Duration, error) {
	ttl, err := l.lock.TTL(ctx)
	if err != nil {
		return 0, fmt.Errorf("lock %q ttl: %w", l.key, err)
	}
	return ttl, nil
}
