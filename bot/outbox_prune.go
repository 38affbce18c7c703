package bot

import (
	"context"
	"time"
)

// OutboxPruner is an optional Outbox capability: deleting the rows that
// were delivered (or given up on) long ago and that nothing reads any more,
// so the outbox holds about DispatcherOptions.Keep of traffic instead of
// growing forever.
type OutboxPruner interface {
	// PruneOutbox deletes rows sent or given up on more than keep ago,
	// except those recovery or a pending decision still reads, working in
	// statements of up to limit rows, and forgets the owners whose
	// heartbeats stopped as long ago; it returns how many rows went.
	PruneOutbox(ctx context.Context, keep time.Duration, limit int) (int, error)
}

// DefaultOutboxKeep is how long delivered outbox rows are kept by default.
const DefaultOutboxKeep = 7 * 24 * time.Hour

// Pruning is tried on every replica once an hour, on the hour; the one
// that takes the pruneLock leadership walks the outbox, a page of
// pruneLimit rows per statement, and the others skip that hour.
const (
	pruneEvery = time.Hour
	pruneLimit = 1000
	pruneLock  = "outbox:prune"
)

// pruneLoop prunes p on every beat of d.pruneEvery until ctx ends; the
// first pass waits for the first beat, so start-up does no pruning work.
func (d *Dispatcher) pruneLoop(ctx context.Context, p OutboxPruner) {
	t := time.NewTimer(UntilBeat(d.pruneEvery))
	select {
	case <-ctx.Done():
		t.Stop()
		return
	case <-t.C:
	}
	repeat(ctx, d.pruneEvery, d.o.Logger, "outbox pruning", func(ctx context.Context) error {
		_, err := d.prune(ctx, p)
		return err
	})
}

// prune deletes what p lets go of now and logs how many rows went. When p
// is also a LeaderLock, only the replica holding pruneLock prunes; the
// others return 0 at once instead of walking the same rows.
func (d *Dispatcher) prune(ctx context.Context, p OutboxPruner) (int, error) {
	if l, ok := p.(LeaderLock); ok {
		lease, led, err := l.TryLead(ctx, pruneLock)
		if err != nil || !led {
			return 0, err
		}
		defer func() {
			if err := lease.Release(context.WithoutCancel(ctx)); err != nil {
				d.o.Logger.Debug("outbox pruning: release its lock", "err", err)
			}
		}()
	}
	n, err := p.PruneOutbox(ctx, d.o.Keep, pruneLimit)
	if n > 0 {
		d.o.Logger.Info("outbox pruned", "rows", n, "older_than", d.o.Keep.String())
	}
	return n, err
}
