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
	// PruneEvery is how often a pruning pass runs.
	PruneEvery = time.Hour
	pruneLimit = 1000
)

// Pruning is one kind of old rows a store lets go of: the outbox's
// delivered rows, a feature's finished records (job runs).
type Pruning struct {
	What  string        // names the rows in logs: "outbox", "job runs"
	Lock  string        // the leadership one replica takes to prune
	Keep  time.Duration // rows older than this go
	Every time.Duration // how often a pass runs
	// Store is the store that prunes; when it is also a LeaderLock, only
	// the replica holding Lock prunes.
	Store any
	Prune func(ctx context.Context, keep time.Duration, limit int) (int, error)
	Log   *slog.Logger
}

// Loop prunes every p.Every until ctx ends; the first
// pass waits for the first one, so start-up does no pruning work.
func (p Pruning) Loop(ctx context.Context) {
	if !Sleep(ctx, p.Every) {
		return
	}
	repeat(ctx, p.Every, p.Log, p.What+" pruning", func(ctx context.Context) error {
		_, err := p.Once(ctx)
		return err
	})
}

// Once prunes what the store lets go of now and logs how many rows went.
// When the store is a LeaderLock and another replica holds p.Lock, it
// returns 0 at once instead of walking the same rows.
func (p Pruning) Once(ctx context.Context) (int, error) {
	if l, ok := p.Store.(LeaderLock); ok {
		lease, led, err := l.TryLead(ctx, p.Lock)
		if err != nil || !led {
			return 0, err
		}
		defer func() {
			if err := lease.Release(context.WithoutCancel(ctx)); err != nil {
				p.Log.Debug(p.What+" pruning: release its lock", "err", err)
			}
		}()
	}
	n, err := p.Prune(ctx, p.Keep, pruneLimit)
	if n > 0 {
		p.Log.Info(p.What+" pruned", "rows", n, "older_than", p.Keep.String())
	}
	return n, err
}
