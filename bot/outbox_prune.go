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

// pruneLock is the leadership of the replica that prunes the outbox.
const pruneLock = "outbox:prune"

// outboxPruning is the hourly pass that prunes p.
func (d *Dispatcher) outboxPruning(p OutboxPruner) Pruning {
	return Pruning{What: "outbox", Lock: pruneLock, Keep: d.o.Keep, Every: d.pruneEvery,
		Store: p, Prune: p.PruneOutbox, Log: d.o.Logger}
}
