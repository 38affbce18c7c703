package bot

import (
	"context"
	"time"
)

// ReserveForTest and HandOverForTest expose the dispatcher's in-memory
// hand-over of rows written already claimed.
func (d *Dispatcher) ReserveForTest() (Claim, bool) { return d.reserve(context.Background()) }

// HandOverForTest: see ReserveForTest.
func (d *Dispatcher) HandOverForTest(m OutboxMessage, claimed bool) { d.handOver(m, claimed) }

// SetPruneEveryForTest makes d prune its outbox every `every` instead of
// hourly; call it before Run.
func (d *Dispatcher) SetPruneEveryForTest(every time.Duration) { d.pruneEvery = every }

// PruneNowForTest runs one prune pass of d's outbox now.
func (d *Dispatcher) PruneNowForTest(ctx context.Context) (int, error) {
	return d.outboxPruning(d.o.Outbox.(OutboxPruner)).Once(ctx)
}
