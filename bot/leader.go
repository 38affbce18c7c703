package bot

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"
)

// Leader runs a task on one replica at a time, the one holding a Redis
// lock. Telegram allows a single getUpdates poller per bot token, so with
// several replicas only the leader polls; every replica still sends.
type Leader struct {
	Locker Locker
	Key    string
	TTL    time.Duration // lock lifetime; refreshed every TTL/3 (default 15s)
	Logger *slog.Logger
	held   atomic.Bool
}

// Held reports whether this replica leads right now.
func (l *Leader) Held() bool { return l.held.Load() }

// Run calls fn while this replica holds the lock, waiting for it
// otherwise, until ctx ends. fn's context is cancelled when the lock is
// lost; when fn returns the lock is given up and, after a pause, sought
// again.
func (l *Leader) Run(ctx context.Context, fn func(context.Context) error) {
	ttl := l.TTL
	if ttl <= 0 {
		ttl = 15 * time.Second
	}
	log := l.Logger
	if log == nil {
		log = slog.Default()
	}
	wait := func(d time.Duration) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(d):
			return true
		}
	}
	standby := false
	for ctx.Err() == nil {
		lock, err := l.Locker.Obtain(ctx, l.Key, ttl)
		if err != nil {
			if !errors.Is(err, ErrLocked) {
				log.Warn("leader lock unavailable; retrying", "key", l.Key, "err", err)
			} else if !standby {
				log.Info("another replica leads; standing by", "key", l.Key)
			}
			standby = true
			if !wait(ttl / 3) {
				return
			}
			continue
		}
		standby = false
		log.Info("leading", "key", l.Key)
		l.held.Store(true)
		runCtx, cancel := context.WithCancel(ctx)
		go func() {
			t := time.NewTicker(ttl / 3)
			defer t.Stop()
			for {
				select {
				case <-runCtx.Done():
					return
				case <-t.C:
					if err := lock.Refresh(runCtx, ttl); err != nil && runCtx.Err() == nil {
						log.Warn("leader lock lost; stepping down", "key", l.Key, "err", err)
						cancel()
						return
					}
				}
			}
		}()
		pause := time.Second
		if err := fn(runCtx); err != nil && ctx.Err() == nil {
			log.Error("leader task stopped", "key", l.Key, "err", err)
			pause = ttl // a task that fails (bad token) is not retried in a tight loop
		}
		cancel()
		l.held.Store(false)
		rctx, stop := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		_ = lock.Release(rctx)
		stop()
		if !wait(pause) {
			return
		}
	}
}
