package bot

import "context"

// reserve makes room for one row to be written already claimed and
// returns the claim to write it with (see Outbox.EnqueueClaimed); the row
// then goes to handOver. ok is false when the dispatcher does not run or
// is full: write the row unclaimed and Nudge. When this replica has no
// heartbeat stored (the first reply after an idle spell) reserve writes
// one before it returns (Liveness.Cover), so the row is never claimed
// without one; otherwise it costs no round trip.
func (d *Dispatcher) reserve(ctx context.Context) (Claim, bool) {
	d.mu.Lock()
	if d.runCtx == nil || d.runCtx.Err() != nil || d.inflight >= d.o.MaxInFlight {
		d.mu.Unlock()
		return Claim{}, false
	}
	d.addInflightLocked()
	d.mu.Unlock()
	d.o.Liveness.Cover(ctx)
	return Claim{Owner: d.o.Owner, Lease: d.o.Lease}, true
}

// handOver delivers row m, written with reserve's claim, without a
// round trip to claim it. When the write did not claim it (claimed false:
// another row of its chat goes first, or the write failed) the room is
// given back and the dispatcher nudged to claim it in order.
func (d *Dispatcher) handOver(m OutboxMessage, claimed bool) {
	if !claimed {
		d.rowDone()
		d.Nudge()
		return
	}
	d.mu.Lock()
	ctx := d.runCtx
	queued := ctx != nil && d.queueLocked(ctx, m)
	d.mu.Unlock()
	if !queued {
		// Stopping, or held behind an earlier row: release it to be
		// claimed again in order (by Drain, or after the restart).
		d.releaseHeld(context.Background(), []OutboxMessage{m})
	}
}
