package bot

import (
	"context"
	"errors"
	"hash/fnv"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-chat/switchboard/channels"
)

// DispatcherOptions configures the outbox dispatcher.
type DispatcherOptions struct {
	Outbox   Outbox
	Channels map[string]channels.Channel
	Owner    string // this process's name, recorded on claims; unique per process
	// Liveness keeps Owner's heartbeat while rows are claimed; shared with
	// the jobs Scheduler, whose runs need it too. Nil: the dispatcher makes
	// its own from Outbox and runs it while Run runs; one given here is
	// run by whoever made it.
	Liveness *Liveness
	Batch    int           // rows claimed at once (default 64)
	Lease    time.Duration // claim lease (default 60s)
	// Poll is the safety poll (default 2s): rows are handed over in memory
	// as they are written (see reserve) or announced with Nudge, and rows
	// released for a retry wake the dispatcher when due; the poll finds
	// the rest, such as a dead replica's.
	Poll time.Duration
	// MaxInFlight bounds the rows claimed and not yet done (default 256).
	MaxInFlight int
	// SendTimeout bounds one Send, waits for short rate limits included
	// (default half the lease, so a row is never sent after its lease).
	SendTimeout time.Duration
	// MaxAttempts before a message is given up (default 10).
	MaxAttempts int
	// Keep is how long rows stay after they were delivered or given up on
	// (default DefaultOutboxKeep; negative keeps them forever), when the
	// Outbox is an OutboxPruner.
	Keep time.Duration
	// OpenFile reads the content of a file a row sends, stored under its
	// SHA-256 (bot/media's store, through media.Opener). Nil: rows with a
	// file fail.
	OpenFile func(ctx context.Context, sha256 string) (io.ReadCloser, error)
	Metrics  *Metrics
	Logger   *slog.Logger
	// Tracer traces each send, in the trace of the run that wrote the row
	// when it was handed over in memory; nil records nothing.
	Tracer trace.Tracer
}

// Dispatcher delivers outbox rows through the channels: in order within a
// chat, each chat on its own worker so one chat's rate limit or slow send
// never holds up another, retried with backoff, each row marked sent after
// its own send (marks are written in batches, off the send path). Several
// replicas may run one each; claims keep them apart, and the rows of a
// replica that stopped heartbeating (it died mid-send) are claimed again at
// once; it heartbeats only while it holds claimed rows (see Liveness).
type Dispatcher struct {
	o     DispatcherOptions
	nudge chan struct{}

	mu       sync.Mutex
	chats    map[string][]OutboxMessage // queued rows per chat whose worker runs
	held     map[string]time.Time       // chats whose earlier row waits for a retry, until when
	inflight int                        // rows claimed and not done (rowDone)
	idle     chan struct{}              // closed when inflight drops to 0; a Liveness hold while not nil
	slot     chan struct{}              // signalled when inflight drops while starved
	starved  bool                       // the last claim asked for less than a batch: no room
	workers  sync.WaitGroup
	runCtx   context.Context          // Run's, while it accepts rows handed over
	wakeAt   time.Time                // earliest retry this dispatcher released
	marks    []Sent                   // sent rows not yet marked
	marking  bool                     // a goroutine writes marks
	marked   chan struct{}            // closed once the queued marks are written
	unmarked map[string]chan struct{} // chat → marked of its last sent row, until written
	// pruneEvery is how often old rows are pruned (PruneEvery; tests
	// shorten it).
	pruneEvery  time.Duration
	ownLiveness bool // o.Liveness was made here: Run runs it
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
		o.Poll = 2 * time.Second
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = 256
	}
	if o.SendTimeout <= 0 {
		o.SendTimeout = o.Lease / 2
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 10
	}
	if o.Keep == 0 {
		o.Keep = DefaultOutboxKeep
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics(nil)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.Tracer = tracerOr(o.Tracer)
	ownLiveness := o.Liveness == nil
	if ownLiveness {
		o.Liveness = NewLiveness(LivenessOptions{Store: o.Outbox, Owner: o.Owner, Logger: o.Logger})
	}
	return &Dispatcher{o: o, ownLiveness: ownLiveness, nudge: make(chan struct{}, 1), slot: make(chan struct{}, 1),
		chats: map[string][]OutboxMessage{}, held: map[string]time.Time{},
		unmarked:   map[string]chan struct{}{},
		pruneEvery: PruneEvery}
}

// Nudge wakes the dispatcher to deliver new rows now.
func (d *Dispatcher) Nudge() {
	select {
	case d.nudge <- struct{}{}:
	default:
	}
}

// Run delivers until ctx is cancelled; sends in progress finish first.
func (d *Dispatcher) Run(ctx context.Context) {
	var background sync.WaitGroup
	defer background.Wait()
	bgCtx, stopBackground := context.WithCancel(ctx)
	defer stopBackground()
	if d.ownLiveness {
		background.Go(func() { d.o.Liveness.Run(bgCtx) })
	}
	if p, ok := d.o.Outbox.(OutboxPruner); ok && d.o.Keep > 0 {
		background.Go(func() { d.outboxPruning(p).Loop(bgCtx) })
	}
	d.mu.Lock()
	d.runCtx = ctx
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		d.runCtx = nil
		d.mu.Unlock()
	}()
	failing := false
	for ctx.Err() == nil {
		n, limit, err := d.claim(ctx)
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
		if n > 0 && n == limit && d.free() > 0 {
			continue // a full batch and room for more: more may be due
		}
		wait := time.NewTimer(d.nextPoll())
		select {
		case <-ctx.Done():
		case <-d.nudge:
		case <-d.slot:
		case <-wait.C:
		}
		wait.Stop()
	}
	d.mu.Lock()
	d.runCtx = nil // hand-overs from now on are released for Drain or a restart
	d.mu.Unlock()
	d.workers.Wait()
}

// nextPoll is how long Run may sleep: until the safety poll or the
// earliest retry it released, whichever comes first.
func (d *Dispatcher) nextPoll() time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	wait := d.o.Poll
	if !d.wakeAt.IsZero() {
		if until := max(time.Until(d.wakeAt), time.Millisecond); until < wait {
			d.wakeAt = time.Time{}
			return until
		}
	}
	return wait
}

// Drain delivers what is due until nothing is left or ctx ends; used at
// shutdown so replies of the last runs go out before the process exits.
func (d *Dispatcher) Drain(ctx context.Context) {
	for ctx.Err() == nil {
		n, _, err := d.claim(ctx)
		if err != nil {
			return
		}
		d.waitIdle(ctx)
		if n == 0 {
			return
		}
	}
}

// free is how many more rows may be claimed now.
func (d *Dispatcher) free() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return max(0, d.o.MaxInFlight-d.inflight)
}

// claim leases up to a batch of due rows (as many as there is room for)
// and hands each to its chat's worker; it returns how many it claimed and
// how many it asked for. Workers stop sending when ctx ends and release
// what they did not send.
func (d *Dispatcher) claim(ctx context.Context) (n, limit int, err error) {
	limit = min(d.o.Batch, d.free())
	d.mu.Lock()
	d.starved = limit < d.o.Batch
	d.mu.Unlock()
	if limit == 0 {
		return 0, 0, nil
	}
	// Pinned, the heartbeat cannot end during the claim; when there is
	// none, the claim writes it should it claim anything (see Liveness).
	var msgs []OutboxMessage
	d.o.Liveness.Claim(func(beat bool) bool {
		msgs, err = d.o.Outbox.Claim(ctx, d.o.Owner, limit, d.o.Lease, beat)
		return err == nil && len(msgs) > 0
	}, func() {
		var held []OutboxMessage
		d.mu.Lock()
		for _, m := range msgs {
			d.addInflightLocked() // the first Holds the heartbeat
			if !d.queueLocked(ctx, m) {
				held = append(held, m)
			}
		}
		d.mu.Unlock()
		d.releaseHeld(ctx, held)
	})
	if err != nil {
		return 0, limit, err
	}
	return len(msgs), limit, nil
}

// queueLocked puts claimed row m on its chat's worker, starting one when
// the chat has none, and reports true; false when an earlier row of the
// chat waits for a retry: m must wait behind it. d.mu is held.
func (d *Dispatcher) queueLocked(ctx context.Context, m OutboxMessage) bool {
	k := m.To.String()
	if until, ok := d.held[k]; ok {
		if time.Now().Before(until) {
			return false
		}
		delete(d.held, k)
	}
	q, running := d.chats[k]
	d.chats[k] = append(q, m)
	if !running {
		d.workers.Add(1)
		go d.work(ctx, k)
	}
	return true
}

// releaseHeld releases rows that must wait behind an earlier row of their
// chat until that one's retry.
func (d *Dispatcher) releaseHeld(ctx context.Context, rows []OutboxMessage) {
	for _, m := range rows {
		d.mu.Lock()
		until := d.held[m.To.String()]
		d.mu.Unlock()
		d.release(ctx, m, until, "waiting for an earlier message")
		d.rowDone()
	}
}

// work delivers one chat's queued rows in order, then retires. After a row
// that was not delivered, the rest of the chat's queue is released to be
// retried after it, keeping the chat's order.
func (d *Dispatcher) work(ctx context.Context, chat string) {
	defer d.workers.Done()
	var failed bool
	var next time.Time
	for {
		d.mu.Lock()
		q := d.chats[chat]
		if len(q) == 0 {
			delete(d.chats, chat)
			d.mu.Unlock()
			return
		}
		m := q[0]
		d.chats[chat] = q[1:]
		d.mu.Unlock()
		if failed {
			// Due with the earlier one; claims go by id, so it stays first.
			d.release(ctx, m, next, "waiting for an earlier message")
			d.rowDone()
			continue
		}
		d.waitMarked(ctx, chat)
		var ok bool
		ok, next = d.deliver(ctx, m)
		if failed = !ok; failed {
			d.mu.Lock()
			if ctx.Err() == nil && next.After(time.Now()) {
				d.held[chat] = next // rows of this chat claimed meanwhile wait too
			}
			d.mu.Unlock()
		}
		if ok {
			continue // done once its mark is written
		}
		d.rowDone()
	}
}

// addInflightLocked counts one more claimed row; the first holds the
// heartbeat until the last is done. d.mu is held.
func (d *Dispatcher) addInflightLocked() {
	if d.inflight == 0 {
		d.idle = make(chan struct{})
		d.o.Liveness.Hold()
	}
	d.inflight++
}

// rowDone counts one claimed row as done: sent, released for a retry or
// failed for good.
func (d *Dispatcher) rowDone() {
	d.mu.Lock()
	d.inflight--
	if d.inflight == 0 && d.idle != nil {
		close(d.idle)
		d.idle = nil
		d.o.Liveness.Release()
	}
	starved := d.starved
	d.mu.Unlock()
	if !starved {
		return
	}
	select {
	case d.slot <- struct{}{}:
	default:
	}
}

// waitIdle waits until every claimed row is done or ctx ends.
func (d *Dispatcher) waitIdle(ctx context.Context) {
	d.mu.Lock()
	idle := d.idle
	d.mu.Unlock()
	if idle == nil {
		return
	}
	select {
	case <-idle:
	case <-ctx.Done():
	}
}

// deliver sends one message and records the outcome. When it was not
// delivered it returns when the chat's next message may be tried (not
// before this one is retried, so the chat keeps its order).
func (d *Dispatcher) deliver(ctx context.Context, m OutboxMessage) (ok bool, next time.Time) {
	ctx, span := d.o.Tracer.Start(withParent(ctx, m.Trace), spanSend, trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(attribute.String("messaging.system", m.To.Platform), attribute.Int64("switchboard.outbox.id", m.ID),
			attribute.Int("switchboard.outbox.attempt", m.Attempts)))
	defer func() {
		if !ok {
			span.SetStatus(codes.Error, "not delivered")
		}
		span.End()
	}()
	now := time.Now()
	ch, found := d.o.Channels[m.To.Platform]
	if !found {
		d.fail(ctx, m, "no channel configured for platform "+m.To.Platform)
		return false, now
	}
	if ctx.Err() != nil {
		d.release(ctx, m, now, "shutdown") // not sent: no send without its chat's last mark (waitMarked)
		return false, now
	}
	sendCtx, cancel := context.WithTimeout(ctx, d.o.SendTimeout)
	id, err := d.send(sendCtx, ch, m)
	cancel()
	if err == nil {
		d.o.Metrics.MessagesOut.WithLabelValues(m.To.Platform).Inc()
		d.markSent(m.To.String(), Sent{OutboxRow: m.Row(), PlatformMessageID: id})
		return true, now
	}
	if ctx.Err() != nil {
		d.release(ctx, m, now, "shutdown")
		return false, now
	}
	// The send may have waited out earlier 429s: a retry is timed from its
	// answer, the platform's latest, not from when it began.
	answered := time.Now()
	var ra *channels.RetryAfterError
	at := answered.Add(RetryDelay(time.Second, m.Attempts))
	switch {
	case errors.Is(err, channels.ErrPermanent):
		d.fail(ctx, m, err.Error())
		return false, now
	case m.Attempts >= d.o.MaxAttempts:
		d.fail(ctx, m, "gave up after retries: "+err.Error())
		return false, now
	case errors.As(err, &ra):
		at = answered.Add(ra.After)
	}
	d.retry(ctx, m, at, err)
	return false, at
}

func (d *Dispatcher) retry(ctx context.Context, m OutboxMessage, at time.Time, err error) {
	d.o.Metrics.OutboxErrors.WithLabelValues(m.To.Platform, "retry").Inc()
	d.o.Logger.Warn("delivery failed, will retry", "outbox_id", m.ID, "to", m.To.String(), "attempt", m.Attempts, "retry_at", at, "err", err)
	d.release(ctx, m, at, err.Error())
}

func (d *Dispatcher) release(ctx context.Context, m OutboxMessage, at time.Time, reason string) {
	ctx = context.WithoutCancel(ctx)
	if err := d.o.Outbox.Retry(ctx, m.Row(), at, reason); err != nil {
		d.o.Logger.Error("outbox retry failed", "outbox_id", m.ID, "err", err)
		return
	}
	d.mu.Lock()
	earlier := d.wakeAt.IsZero() || at.Before(d.wakeAt)
	if earlier {
		d.wakeAt = at
	}
	d.mu.Unlock()
	if earlier {
		d.Nudge() // Run sleeps until then instead
	}
}

// outboxKey is the deduplication key (channels.Outbound.Key) of an outbox
// row: every attempt to deliver the row carries the same key. A reply's key
// also carries a hash of its session and seq: after a PostgreSQL crash lost
// a reply's row, a later row may get the same id (see OutboxRow), and the
// platform must not take it for a repeat of the lost one. It stays within
// Discord's 25-character nonce for ids below 10^12.
func outboxKey(r OutboxRow) string {
	key := "sb" + strconv.FormatInt(r.ID, 10)
	if r.Session == "" && r.SourceSeq == 0 {
		return key
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(r.Session))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write(strconv.AppendInt(nil, r.SourceSeq, 10))
	return key + "-" + strconv.FormatUint(uint64(h.Sum32()), 36)
}
