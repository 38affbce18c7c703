package bot

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
)

// /stop ends a chat's running turn at once, on whichever replica runs it.
// Each replica keeps its running turns by session (runningTurns); the
// replica that gets /stop cancels the turn when it runs here, and else,
// when the session's lock says a run holds it elsewhere, publishes the stop
// on the StopBus, which every replica listens to (RunStops). The stopped
// run records the stop itself (stopped), so the chat hears of it once,
// from the replica that did stop it.

// StopRequest asks the replica that runs Session's turn to stop it; By is
// the identity (platform:user_id) of the person who asked.
type StopRequest struct {
	Session string
	By      string
}

// StopBus carries stop requests to every replica (Redis pub/sub). It is
// only a way to reach the replica that runs a turn: a request that finds
// no turn running changes nothing.
type StopBus interface {
	// PublishStop sends s to every replica's subscription.
	PublishStop(ctx context.Context, s StopRequest) error
	// SubscribeStops delivers the stop requests published from now on,
	// until stop is called.
	SubscribeStops(ctx context.Context) (reqs <-chan StopRequest, stop func(), err error)
}

// stoppedError is the cause a stopped run's context is cancelled with.
type stoppedError struct{ by string }

func (e *stoppedError) Error() string { return "stopped by " + e.by }

// stoppedBy returns who stopped the run of ctx, or "" when nobody did (a
// shutdown, a timeout, or no cancellation at all).
func stoppedBy(ctx context.Context) string {
	var se *stoppedError
	if errors.As(context.Cause(ctx), &se) {
		return se.by
	}
	return ""
}

// runningTurns are the turns running on this replica, by session.
type runningTurns struct {
	mu    sync.Mutex
	turns map[string]*runningTurn
}

// runningTurn is one running turn: when it started and how to stop it.
type runningTurn struct {
	started time.Time
	cancel  context.CancelCauseFunc
}

// start registers a turn of session that cancel stops, and returns the
// func that unregisters it.
func (t *runningTurns) start(session string, cancel context.CancelCauseFunc) (done func()) {
	turn := &runningTurn{started: time.Now(), cancel: cancel}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.turns == nil {
		t.turns = map[string]*runningTurn{}
	}
	t.turns[session] = turn
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.turns[session] == turn {
			delete(t.turns, session)
		}
	}
}

// stop cancels session's turn when it runs here, and reports whether it
// did.
func (t *runningTurns) stop(session, by string) bool {
	t.mu.Lock()
	turn := t.turns[session]
	t.mu.Unlock()
	if turn == nil {
		return false
	}
	turn.cancel(&stoppedError{by: by})
	return true
}

// Texts of /stop's answers.
const (
	nothingRunning = "Nothing is running here."
	parkedNotStop  = "Nothing is running here: a request waits for an approver, or a question for its answer. /cancel withdraws it."
)

// cmdStop answers /stop: the chat's running turn is stopped here or on the
// replica that runs it, which then says so in the chat ("" here).
func (r *Router) cmdStop(ctx context.Context, in channels.Inbound, _ string) string {
	session := r.sessionKey(ctx, in.Address())
	by := in.Identity()
	if r.running.stop(session, by) {
		r.log.Info("turn stopped", "session", session, "by", by)
		return ""
	}
	switch elsewhere, err := r.runsElsewhere(ctx, session); {
	case err != nil:
		r.log.Warn("stop: could not tell whether the turn runs elsewhere", "session", session, "err", err)
		return "Could not reach the other replicas to stop it right now. Try /stop again in a moment."
	case elsewhere && r.opts.Stops != nil:
		if err := r.opts.Stops.PublishStop(ctx, StopRequest{Session: session, By: by}); err != nil {
			r.log.Warn("stop: publish failed", "session", session, "err", err)
			return "Could not reach the other replicas to stop it right now. Try /stop again in a moment."
		}
		r.log.Info("stop sent to the replica running the turn", "session", session, "by", by)
		return ""
	}
	if r.parked(ctx, session) {
		return parkedNotStop
	}
	return nothingRunning
}

// runsElsewhere reports whether a run holds session's lock: another
// replica runs its turn (this one runs none). Without a Locker nothing
// runs elsewhere.
func (r *Router) runsElsewhere(ctx context.Context, session string) (bool, error) {
	if r.opts.Locker == nil {
		return false, nil
	}
	l, err := r.opts.Locker.Obtain(ctx, "lock:session:"+session, time.Second)
	switch {
	case errors.Is(err, ErrLocked):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("probe session lock: %w", err)
	}
	// Nobody held it: give it back at once, so a run about to start is
	// held up for no longer than its next try.
	_ = l.Release(context.WithoutCancel(ctx))
	return false, nil
}

// parked reports whether session's newest step waits on tool calls with
// no results: a run parked on an approval, which /cancel withdraws.
func (r *Router) parked(ctx context.Context, session string) bool {
	msgs, err := r.opts.History.Load(ctx, session, stopWindow)
	if err != nil {
		return false
	}
	_, missing, _ := openStep(msgs)
	return len(missing) > 0
}

// RunStops stops the turns running here that other replicas' /stop asks
// for, until ctx ends. Without a StopBus it returns at once. A lost
// subscription (Redis down) is made again after a second.
func (r *Router) RunStops(ctx context.Context) {
	if r.opts.Stops == nil {
		return
	}
	for ctx.Err() == nil {
		reqs, stop, err := r.opts.Stops.SubscribeStops(ctx)
		if err == nil {
			r.stopsListening.Store(true)
			r.takeStops(ctx, reqs)
			r.stopsListening.Store(false)
			stop()
		} else {
			r.log.Debug("stop subscription unavailable", "err", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// takeStops stops the turns reqs ask for until reqs closes or ctx ends.
func (r *Router) takeStops(ctx context.Context, reqs <-chan StopRequest) {
	for {
		select {
		case <-ctx.Done():
			return
		case s, ok := <-reqs:
			if !ok {
				return
			}
			if r.running.stop(s.Session, s.By) {
				r.log.Info("turn stopped from another replica", "session", s.Session, "by", s.By)
			}
		}
	}
}
