package bot

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
)

// DispatcherOptions configures the outbox dispatcher.
type DispatcherOptions struct {
	Outbox   Outbox
	Channels map[string]channels.Channel
	Owner    string        // this replica's name, recorded on claims
	Batch    int           // rows claimed at once (default 64)
	Lease    time.Duration // claim lease (default 60s)
	Poll     time.Duration // idle poll interval (default 500ms)
	// MaxAttempts before a message is given up (default 10).
	MaxAttempts int
	Metrics     *Metrics
	Logger      *slog.Logger
}

// Dispatcher delivers outbox rows through the channels: in order per chat,
// chats in parallel, retried with backoff, marked sent with the platform's
// message id. Several replicas may run one each; claims keep them apart.
type Dispatcher struct {
	o     DispatcherOptions
	nudge chan struct{}
}

// NewDispatcher returns a dispatcher; call Run to start it.
func NewDispatcher(o DispatcherOptions) *Dispatcher {
	if o.Batch <= 0 {
		o.Batch = 64
	}
	if o.Lease <= 0 {
		o.Lease = 60 * time.Second
	}
	if o.Poll <= 0 {
		o.Poll = 500 * time.Millisecond
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 10
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics(nil)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Dispatcher{o: o, nudge: make(chan struct{}, 1)}
}

// Nudge wakes the dispatcher to deliver new rows now.
func (d *Dispatcher) Nudge() {
	select {
	case d.nudge <- struct{}{}:
	default:
	}
}

// Run delivers until ctx is cancelled.
func (d *Dispatcher) Run(ctx context.Context) {
	failing := false
	for ctx.Err() == nil {
		n, err := d.deliverBatch(ctx)
		if err != nil && ctx.Err() == nil {
			if !failing {
				d.o.Logger.Error("outbox unavailable; will keep trying", "err", err)
			}
			failing = true
		} else if err == nil {
			if failing {
				d.o.Logger.Info("outbox available again")
			}
			failing = false
		}
		if n == d.o.Batch {
			continue // more waiting
		}
		select {
		case <-ctx.Done():
		case <-d.nudge:
		case <-time.After(d.o.Poll):
		}
	}
}

// Drain delivers what is due until nothing is left or ctx ends; used at
// shutdown so replies of the last runs go out before the process exits.
func (d *Dispatcher) Drain(ctx context.Context) {
	for ctx.Err() == nil {
		n, err := d.deliverBatch(ctx)
		if err != nil || n == 0 {
			return
		}
	}
}

// deliverBatch claims and delivers one batch, returning how many it claimed.
func (d *Dispatcher) deliverBatch(ctx context.Context) (int, error) {
	msgs, err := d.o.Outbox.Claim(ctx, d.o.Owner, d.o.Batch, d.o.Lease)
	if err != nil {
		return 0, err
	}
	byChat := map[string][]OutboxMessage{}
	var order []string
	for _, m := range msgs {
		k := m.To.String()
		if _, ok := byChat[k]; !ok {
			order = append(order, k)
		}
		byChat[k] = append(byChat[k], m)
	}
	var wg sync.WaitGroup
	for _, k := range order {
		wg.Add(1)
		go func(ms []OutboxMessage) {
			defer wg.Done()
			for i, m := range ms {
				if !d.deliver(ctx, m) {
					// Keep chat order: release the rest to be retried after.
					for _, rest := range ms[i+1:] {
						d.release(ctx, rest, time.Now().Add(time.Second), "waiting for an earlier message")
					}
					return
				}
			}
		}(byChat[k])
	}
	wg.Wait()
	return len(msgs), nil
}

// deliver sends one message and records the outcome; false when it was not
// delivered.
func (d *Dispatcher) deliver(ctx context.Context, m OutboxMessage) bool {
	log := d.o.Logger.With("outbox_id", m.ID, "to", m.To.String())
	ch, ok := d.o.Channels[m.To.Platform]
	if !ok {
		d.fail(ctx, m, "no channel configured for platform "+m.To.Platform)
		return false
	}
	id, err := ch.Send(ctx, channels.Outbound{To: m.To, Text: m.Text, Buttons: m.Buttons, ReplyTo: m.ReplyTo})
	if err == nil {
		d.o.Metrics.MessagesOut.WithLabelValues(m.To.Platform).Inc()
		// Record the delivery even when shutdown began meanwhile: a sent
		// message left pending would be sent again.
		if err := d.o.Outbox.MarkSent(context.WithoutCancel(ctx), m.ID, id); err != nil {
			log.Error("sent but could not mark sent", "err", err)
		}
		return true
	}
	if ctx.Err() != nil {
		d.release(ctx, m, time.Now(), "shutdown")
		return false
	}
	var ra *channels.RetryAfterError
	switch {
	case errors.Is(err, channels.ErrPermanent):
		d.fail(ctx, m, err.Error())
	case m.Attempts >= d.o.MaxAttempts:
		d.fail(ctx, m, "gave up after retries: "+err.Error())
	case errors.As(err, &ra):
		d.retry(ctx, m, time.Now().Add(ra.After), err)
	default:
		d.retry(ctx, m, time.Now().Add(backoff(m.Attempts)), err)
	}
	return false
}

func (d *Dispatcher) retry(ctx context.Context, m OutboxMessage, at time.Time, err error) {
	d.o.Metrics.OutboxErrors.WithLabelValues(m.To.Platform, "retry").Inc()
	d.o.Logger.Warn("delivery failed, will retry", "outbox_id", m.ID, "to", m.To.String(), "attempt", m.Attempts, "retry_at", at, "err", err)
	d.release(ctx, m, at, err.Error())
}

func (d *Dispatcher) release(ctx context.Context, m OutboxMessage, at time.Time, reason string) {
	ctx = context.WithoutCancel(ctx)
	if err := d.o.Outbox.Retry(ctx, m.ID, at, reason); err != nil {
		d.o.Logger.Error("outbox retry failed", "outbox_id", m.ID, "err", err)
	}
}

func (d *Dispatcher) fail(ctx context.Context, m OutboxMessage, reason string) {
	d.o.Metrics.OutboxErrors.WithLabelValues(m.To.Platform, "failed").Inc()
	d.o.Logger.Error("delivery failed for good", "outbox_id", m.ID, "to", m.To.String(), "reason", reason)
	if err := d.o.Outbox.Fail(context.WithoutCancel(ctx), m.ID, reason); err != nil {
		d.o.Logger.Error("outbox fail failed", "outbox_id", m.ID, "err", err)
	}
}

// backoff is the delay before attempt n+1: 1s, 2s, 4s … capped at 5m.
func backoff(attempts int) time.Duration {
	d := time.Second
	for i := 1; i < attempts && d < 5*time.Minute; i++ {
		d *= 2
	}
	if d > 5*time.Minute {
		d = 5 * time.Minute
	}
	return d
}
