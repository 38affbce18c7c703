package bot

import "context"

// markSent queues the record of a delivery to chat. One goroutine at a time
// writes the queued marks in one statement, so under load a mark costs a
// fraction of a round trip and never delays another chat's send; each row
// counts as done (Drain waits for it) once its mark is written. A mark
// is written even when shutdown began meanwhile: a sent row left pending
// would be sent again.
func (d *Dispatcher) markSent(chat string, s Sent) {
	d.mu.Lock()
	d.marks = append(d.marks, s)
	if d.marked == nil {
		d.marked = make(chan struct{})
	}
	d.unmarked[chat] = d.marked
	start := !d.marking
	d.marking = true
	if start {
		d.workers.Add(1) // a worker calls this: the count is not zero
	}
	d.mu.Unlock()
	if start {
		go d.writeMarks()
	}
}

// writeMarks writes queued marks until none are left.
func (d *Dispatcher) writeMarks() {
	defer d.workers.Done()
	for {
		d.mu.Lock()
		batch, written := d.marks, d.marked
		d.marks, d.marked = nil, nil
		if len(batch) == 0 {
			d.marking = false
			d.mu.Unlock()
			return
		}
		d.mu.Unlock()
		if err := d.o.Outbox.MarkSentAll(context.Background(), batch); err != nil {
			ids := make([]int64, len(batch))
			for i, s := range batch {
				ids[i] = s.ID
			}
			d.o.Logger.Error("sent but could not mark sent; they may be sent again", "outbox_ids", ids, "err", err)
		}
		d.mu.Lock()
		close(written)
		for chat, w := range d.unmarked {
			if w == written {
				delete(d.unmarked, chat)
			}
		}
		d.mu.Unlock()
		for range batch {
			d.rowDone()
		}
	}
}

// waitMarked waits until the mark of chat's last delivered row is written
// (at most MarkSentAll's retry budget) or ctx ends (shutdown: the next send
// is released, not made), so a crash leaves at most one of a chat's sends
// unrecorded: after a restart a chat may get its last answer twice, never
// several.
func (d *Dispatcher) waitMarked(ctx context.Context, chat string) {
	d.mu.Lock()
	written := d.unmarked[chat]
	d.mu.Unlock()
	if written != nil {
		select {
		case <-written:
		case <-ctx.Done():
		}
	}
}

func (d *Dispatcher) fail(ctx context.Context, m OutboxMessage, reason string) {
	d.o.Metrics.OutboxErrors.WithLabelValues(m.To.Platform, "failed").Inc()
	d.o.Logger.Error("delivery failed for good", "outbox_id", m.ID, "to", m.To.String(), "reason", reason)
	if err := d.o.Outbox.Fail(context.WithoutCancel(ctx), m.Row(), reason); err != nil {
		d.o.Logger.Error("outbox fail failed", "outbox_id", m.ID, "err", err)
	}
}
