package bot

import (
	"context"
	"log/slog"
	"time"
)

// Pruning is tried on every replica once an hour, on the hour; the one
// that takes a pruning's leadership walks its table, a page of pruneLimit
// rows per statement, and the others skip that hour.
const (
	pruneEvery = time.Hour
	pruneLimit = 1000
)

// pruning is one kind of old rows a store lets go of: the outbox's
// delivered rows, finished job runs.
type pruning struct {
	what  string        // names the rows in logs: "outbox", "job runs"
	lock  string        // the leadership one replica takes to prune
	keep  time.Duration // rows older than this go
	every time.Duration // how often a pass runs, on that beat
	// store is the store that prunes; when it is also a LeaderLock, only
	// the replica holding lock prunes.
	store any
	prune func(ctx context.Context, keep time.Duration, limit int) (int, error)
	log   *slog.Logger
}

// loop prunes on every beat of p.every until ctx ends; the first pass
// waits for the first beat, so start-up does no pruning work.
func (p pruning) loop(ctx context.Context) {
	if !sleep(ctx, UntilBeat(p.every)) {
		return
	}
	repeat(ctx, p.every, p.log, p.what+" pruning", func(ctx context.Context) error {
		_, err := p.once(ctx)
		return err
	})
}

// once prunes what the store lets go of now and logs how many rows went.
// When the store is a LeaderLock and another replica holds p.lock, it
// returns 0 at once instead of walking the same rows.
func (p pruning) once(ctx context.Context) (int, error) {
	if l, ok := p.store.(LeaderLock); ok {
		lease, led, err := l.TryLead(ctx, p.lock)
		if err != nil || !led {
			return 0, err
		}
		defer func() {
			if err := lease.Release(context.WithoutCancel(ctx)); err != nil {
				p.log.Debug(p.what+" pruning: release its lock", "err", err)
			}
		}()
	}
	n, err := p.prune(ctx, p.keep, pruneLimit)
	if n > 0 {
		p.log.Info(p.what+" pruned", "rows", n, "older_than", p.keep.String())
	}
	return n, err
}
