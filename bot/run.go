package bot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/tools"
)

// Session locks: a run holds its session's lock so replicas never run the
// same session at once; the lock is refreshed while the run goes on.
const (
	sessionLockTTL  = 30 * time.Second
	lockWait        = 2 * time.Minute
	typingInterval  = 4 * time.Second
	maxRunDuration  = 15 * time.Minute
	noReplyFallback = "(I have nothing to add.)"
)

// runSession is the lane's worker: one agent run on one session, with the
// reply written to the outbox.
func (r *Router) runSession(ctx context.Context, j laneJob) {
	log := r.log.With("session", j.Session)
	wait := lockWait
	if j.recovered {
		wait = 0
	}
	lock, err := r.obtainSessionLock(ctx, j.Session, wait)
	if err != nil {
		log.Info("session busy elsewhere; leaving it to the run that holds it", "err", err)
		return
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if lock != nil {
			_ = lock.Release(rctx)
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, maxRunDuration)
	defer cancel()
	stop := r.keepAlive(ctx, j, lock)
	defer stop()

	peer := "group"
	if j.Direct {
		peer = "direct"
	}
	call := tools.Call{Channel: j.To.Platform, ChatID: j.To.ChatID, ThreadID: j.To.ThreadID,
		PeerKind: peer, UserID: j.UserID, Session: j.Session, Agent: r.opts.AgentName}
	start := time.Now()
	res, err := r.opts.Agent.Run(ctx, agentcore.RunInput{Session: j.Session, Call: call})
	switch {
	case err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled):
		// Shutting down: the session stays unfinished and resumes later.
		r.opts.Metrics.AgentRun.WithLabelValues("cancelled").Observe(time.Since(start).Seconds())
		return
	case err != nil:
		r.opts.Metrics.AgentRun.WithLabelValues("error").Observe(time.Since(start).Seconds())
		r.failRun(ctx, j, err)
		return
	case res.Idle:
		return
	}
	r.opts.Metrics.AgentRun.WithLabelValues("ok").Observe(time.Since(start).Seconds())
	text := res.Text
	if strings.TrimSpace(text) == "" {
		text = noReplyFallback
	}
	r.send(ctx, OutboxMessage{Session: j.Session, SourceSeq: res.Seq, To: j.To, Text: text, ReplyTo: j.ReplyTo})
}

// failRun records the failure in the session (so it is not retried in a
// loop) and tells the user briefly, with an id to find the details in logs.
func (r *Router) failRun(ctx context.Context, j laneJob, err error) {
	id := errorID()
	r.log.Error("agent run failed", "session", j.Session, "error_id", id, "err", r.opts.Scrub(err.Error()))
	text := fmt.Sprintf("Sorry, I couldn't answer that: %s (error id %s). Please try again in a moment.", userReason(err), id)
	seq, aerr := r.opts.History.Append(ctx, j.Session, agentcore.Message{Role: agentcore.RoleAssistant, Content: text})
	if aerr != nil {
		r.log.Error("record failure failed", "session", j.Session, "err", aerr)
		seq = 0
	}
	r.send(ctx, OutboxMessage{Session: j.Session, SourceSeq: seq, To: j.To, Text: text, ReplyTo: j.ReplyTo})
}

// userReason says in a few words what went wrong, without internals.
func userReason(err error) string {
	var pe *agentcore.ProviderError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "the model took too long"
	case errors.As(err, &pe) && pe.Status == 429:
		return "the model provider is rate limiting us"
	case errors.As(err, &pe) && (pe.Status == 401 || pe.Status == 403):
		return "the model provider refused our credentials"
	case errors.As(err, &pe):
		return "the model provider is unavailable"
	}
	return "something went wrong on my side"
}

func errorID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// obtainSessionLock waits for the session's distributed lock. Without a
// Locker (tests, single process) it returns a nil lock.
func (r *Router) obtainSessionLock(ctx context.Context, session string, wait time.Duration) (Lock, error) {
	if r.opts.Locker == nil {
		return nil, nil
	}
	deadline := time.Now().Add(wait)
	backoff := 50 * time.Millisecond
	for {
		lock, err := r.opts.Locker.Obtain(ctx, "lock:session:"+session, sessionLockTTL)
		switch {
		case err == nil:
			return lock, nil
		case !errors.Is(err, ErrLocked):
			// Redis trouble: run anyway; Postgres sequencing keeps the
			// session consistent and the lane serialises this replica.
			r.log.Warn("session lock unavailable, running unlocked", "session", session, "err", err)
			return nil, nil
		case time.Now().After(deadline):
			return nil, fmt.Errorf("session %s: %w", session, err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(backoff):
		}
		if backoff < time.Second {
			backoff *= 2
		}
	}
}

// keepAlive shows "typing…" in the chat and refreshes the session lock
// while a run goes on. The returned func stops it.
func (r *Router) keepAlive(ctx context.Context, j laneJob, lock Lock) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	typer, _ := r.opts.Channels[j.To.Platform].(channels.Typer)
	go func() {
		defer close(done)
		tick := time.NewTicker(typingInterval)
		defer tick.Stop()
		for {
			if typer != nil {
				if err := typer.Typing(ctx, j.To); err != nil && ctx.Err() == nil {
					r.log.Debug("typing indicator failed", "err", err)
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if lock != nil {
				if err := lock.Refresh(ctx, sessionLockTTL); err != nil && ctx.Err() == nil {
					r.log.Warn("session lock refresh failed", "session", j.Session, "err", err)
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}
