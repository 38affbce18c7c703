package bot

import (
	"context"
	"go.opentelemetry.io/otel/trace"
	"log/slog"
	"sync"

	"github.com/switchboard-chat/switchboard/bot/stream"
	"github.com/switchboard-chat/switchboard/channels"
)

// LaneOptions bounds the work the daemon takes on.
type LaneOptions struct {
	// Workers is how many sessions run at once across all chats (default
	// 64; a run waiting for an approval is parked and holds none).
	Workers int
	// QueueDepth is how many runs may wait per session (default 8).
	QueueDepth int
}

// laneJob asks for one agent run on a session.
type laneJob struct {
	Session string
	To      channels.Address
	UserID  string
	Direct  bool
	ReplyTo string
	// recovered jobs come from recovery: they skip the session when its
	// lock is held (a live run elsewhere) instead of waiting.
	recovered bool
	// message is set when a new message asked for the run (not a resume
	// or recovery): it is answered even when the run stays parked.
	message bool
	// trace is the span of the message that asked for the run; the run's
	// span continues its trace.
	trace trace.SpanContext
	// live shows the run's answers while they are written; nil shows
	// none.
	live *stream.Answer
}

// lanes runs jobs one at a time per session, different sessions in
// parallel on a bounded pool.
type lanes struct {
	run   func(context.Context, laneJob)
	log   *slog.Logger
	depth int
	sem   chan struct{}

	mu     sync.Mutex
	queues map[string]*lane
	closed bool
	wg     sync.WaitGroup
	ctx    context.Context
	cancel context.CancelFunc
}

func newLanes(o LaneOptions, run func(context.Context, laneJob), log *slog.Logger) *lanes {
	if o.Workers <= 0 {
		o.Workers = 64
	}
	if o.QueueDepth <= 0 {
		o.QueueDepth = 8
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &lanes{run: run, log: log, depth: o.QueueDepth, sem: make(chan struct{}, o.Workers),
		queues: map[string]*lane{}, ctx: ctx, cancel: cancel}
}

// lane is one session's queue. It lives while its jobs wait or run.
type lane struct {
	q       []laneJob // waiting jobs, oldest first, at most lanes.depth
	running bool      // a goroutine drains q
}

// laneLocked returns session's lane, creating it. l.mu is held.
func (l *lanes) laneLocked(session string) *lane {
	ln := l.queues[session]
	if ln == nil {
		ln = &lane{}
		l.queues[session] = ln
	}
	return ln
}

// retireLocked drops session's lane when nothing uses it: no job waits or
// runs.
func (l *lanes) retireLocked(session string) {
	if ln := l.queues[session]; ln != nil && !ln.running && len(ln.q) == 0 {
		delete(l.queues, session)
	}
}

// enqueue queues j on its session's lane; false when the lanes are closed.
// A full lane drops j: a run waits in it that has not started yet, and a
// run answers every message stored before it starts. So does a lane that
// runs or holds anything when j comes from recovery: what recovery found
// is that lane's to finish, and a recovered run knows no sender, so one
// going first would answer a message that arrived meanwhile as nobody's
// (ask_user refused, the budget charged to no one).
func (l *lanes) enqueue(j laneJob) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	ln := l.laneLocked(j.Session)
	if j.recovered && (ln.running || len(ln.q) > 0) {
		l.log.Debug("a run of the session goes on here; it finishes what recovery found", "session", j.Session)
		return true
	}
	if len(ln.q) >= l.depth {
		l.log.Debug("lane full; a queued run will answer", "session", j.Session)
		return true
	}
	ln.q = append(ln.q, j)
	if !ln.running {
		ln.running = true
		l.wg.Add(1)
		go l.drain(j.Session, ln)
	}
	return true
}

// drain runs the session's jobs in order and retires the lane when empty.
func (l *lanes) drain(session string, ln *lane) {
	defer l.wg.Done()
	for {
		l.mu.Lock()
		if len(ln.q) == 0 {
			ln.running = false
			l.retireLocked(session)
			l.mu.Unlock()
			return
		}
		j := ln.q[0]
		ln.q = ln.q[1:]
		l.mu.Unlock()
		select {
		case l.sem <- struct{}{}:
		case <-l.ctx.Done():
			return
		}
		l.run(l.ctx, j)
		<-l.sem
	}
}

// close stops taking jobs and waits for lanes to drain, or cancels the
// running ones when ctx ends first. Cancelled runs resume after restart.
func (l *lanes) close(ctx context.Context) error {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	done := make(chan struct{})
	go func() { l.wg.Wait(); close(done) }()
	select {
	case <-done:
		l.cancel()
		return nil
	case <-ctx.Done():
		l.cancel()
		<-done
		return ctx.Err()
	}
}
