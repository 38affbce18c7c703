package redis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/switchboard-chat/switchboard/bot"
)

// ErrNotHeld is returned by Lock.Refresh and Lock.Release when the lock
// expired or was taken by someone else.
var ErrNotHeld = errors.New("lock no longer held (it expired or another holder took it)")

// Lock values are "<instance id>:<random token>": the owner instance is
// read back by the scripts to tell a live holder from a dead one
// (obtainScript, in lock_obtain.go).
var (
	refreshScript = goredis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`)
	releaseScript = goredis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`)
	ttlScript = goredis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PTTL', KEYS[1])
end
return -3`)
)

// Obtain takes the lock key for ttl. A lock whose owner instance stopped
// beating (a crashed process) is taken over at once; one held by a live
// instance, this one included, fails with an error matching bot.ErrLocked.
// Keys live under <prefix>lock:<key>. Obtains made while another is in
// flight go to Redis together, in one script call (lock_obtain.go).
func (s *Store) Obtain(ctx context.Context, key string, ttl time.Duration) (bot.Lock, error) {
	if ttl <= 0 {
		return nil, fmt.Errorf("obtain lock %q: ttl %s must be positive", key, ttl)
	}
	token, err := lockToken()
	if err != nil {
		return nil, fmt.Errorf("obtain lock %q: %w", key, err)
	}
	c := &obtainCall{key: key, value: s.inst.id + ":" + token, ttl: ttl}
	err = s.obtains.Do(ctx, c, s.sendObtains)
	if err != nil && c.grouped {
		// The group failed, maybe for another's reason: alone.
		err = s.obtain(ctx, []*obtainCall{c})
	}
	if err != nil {
		return nil, fmt.Errorf("obtain lock %q: %w", key, err)
	}
	switch c.res {
	case 0:
		return nil, fmt.Errorf("obtain lock %q: %w", key, bot.ErrLocked)
	case 2:
		s.logger.Info("took over a lock whose owner is gone", "key", key)
	}
	s.inst.hold() // the script set the heartbeat; it is beaten from now on
	l := &Lock{s: s, key: key, value: c.value}
	if err := ctx.Err(); err != nil {
		// Taken in a group after this caller gave up: given back.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), obtainGroupTimeout)
		defer cancel()
		_ = l.Release(rctx)
		return nil, fmt.Errorf("obtain lock %q: %w", key, err)
	}
	return l, nil
}

// lockToken returns a random token that tells this holder from others.
func lockToken() (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("lock token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// Lock is a held Redis lock; it implements bot.Lock.
type Lock struct {
	s       *Store
	key     string
	value   string
	dropped atomic.Bool // given back: no longer counted in the instance's holds
}

// drop stops counting l among the instance's held locks (once).
func (l *Lock) drop() {
	if !l.dropped.Swap(true) {
		l.s.inst.drop()
	}
}

var _ bot.Lock = (*Lock)(nil)

// Refresh extends the lock to ttl from now. It fails with ErrNotHeld when
// the lock was lost.
func (l *Lock) Refresh(ctx context.Context, ttl time.Duration) error {
	if ttl <= 0 {
		return fmt.Errorf("refresh lock %q: ttl %s must be positive", l.key, ttl)
	}
	n, err := refreshScript.Run(ctx, l.s.scripts, []string{"lock:" + l.key}, l.value, ttl.Milliseconds()).Int()
	if err != nil {
		return fmt.Errorf("refresh lock %q: %w", l.key, err)
	}
	if n == 0 {
		return fmt.Errorf("refresh lock %q: %w", l.key, ErrNotHeld)
	}
	return nil
}

// Release gives the lock back. It fails with ErrNotHeld when the lock was
// already lost.
func (l *Lock) Release(ctx context.Context) error {
	defer l.drop() // released, lost or left to its TTL: the caller is done with it
	n, err := releaseScript.Run(ctx, l.s.scripts, []string{"lock:" + l.key}, l.value).Int()
	if err != nil {
		return fmt.Errorf("release lock %q: %w", l.key, err)
	}
	if n == 0 {
		return fmt.Errorf("release lock %q: %w", l.key, ErrNotHeld)
	}
	return nil
}

// TTL returns how long the lock is still held; 0 when it was lost.
func (l *Lock) TTL(ctx context.Context) (time.Duration, error) {
	ms, err := ttlScript.Run(ctx, l.s.scripts, []string{"lock:" + l.key}, l.value).Int64()
	if err != nil {
		return 0, fmt.Errorf("lock %q ttl: %w", l.key, err)
	}
	if ms < 0 {
		return 0, nil
	}
	return time.Duration(ms) * time.Millisecond, nil
}
