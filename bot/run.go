package bot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sethvargo/go-retry"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot/progress"
	"github.com/switchboard-chat/switchboard/bot/stream"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/tools"
)

// Session locks: a run holds its session's lock so replicas never run the
// same session at once; the lock is refreshed while the run goes on.
const (
	sessionLockTTL = 30 * time.Second
	lockWait       = 2 * time.Minute
	// MaxRunDuration bounds one agent run.
	MaxRunDuration  = 15 * time.Minute
	noReplyFallback = "(I have nothing to add.)"
)

// Resume queues a run of session, parked on a decision (an approval, an
// answer to a question) that now lets it go on, in chat for user. Any replica may resume: the run
// takes the session's lock and continues from the stored session.
func (r *Router) Resume(ctx context.Context, session string, chat channels.Address, user string) {
	if chat.Platform == "" || r.opts.Channels[chat.Platform] == nil {
		r.log.Warn("the parked run's chat is not served here; it resumes with recovery", "session", session, "chat", chat.String())
		return
	}
	if !r.lanes.enqueue(laneJob{Session: session, To: chat, UserID: user}) {
		r.log.Info("not resuming now (shutting down); recovery will", "session", session)
	}
}

// runSession is the lane's worker: one agent run on one session. Each final
// reply goes to the outbox as soon as it is stored; a run that parks on an
// approval releases the lane and the lock.
func (r *Router) runSession(ctx context.Context, j laneJob) {
	ctx, span := r.opts.Tracer.Start(withParent(ctx, j.trace), spanRun,
		trace.WithAttributes(attribute.String("switchboard.session", j.Session), attribute.Bool("switchboard.recovered", j.recovered)))
	defer span.End()
	log := traced(ctx, r.log).With("session", j.Session)
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
		if lock == nil {
			return
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = lock.Release(rctx)
	}()
	ctx, cancel := context.WithTimeout(ctx, MaxRunDuration)
	defer cancel()
	// The answer as it is written, with the tool steps; "typing…", and a
	// "working…" note with the steps where the answer cannot show them;
	// the session lock is refreshed meanwhile.
	j.live = r.startAnswer(ctx, j)
	defer j.live.Stop()
	display := r.startProgress(ctx, j, lock)
	defer display.Stop(ctx)

	// The turn's own context: /stop cancels it (stoppedError), not the
	// progress display or the lock refresh, which go on while the stop is
	// recorded.
	turnCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	defer r.running.start(j.Session, stop)()
	r.runAgent(turnCtx, &j, display)
}

// startProgress starts showing the progress of run j in its chat and
// refreshing its session lock (nil: none) until Stop.
func (r *Router) startProgress(ctx context.Context, j laneJob, lock Lock) *progress.Display {
	ch := r.opts.Channels[j.To.Platform]
	if background(j.Session) {
		ch = nil // a teammate's or subagent's work is not shown in the chat
	}
	return progress.Start(ctx, progress.Options{To: j.To, Channel: ch, Lock: lock, LockTTL: sessionLockTTL,
		Scrub: r.opts.Scrub, Log: r.log.With("session", j.Session), NoNote: j.live != nil})
}

// startAnswer starts showing run j's answers as they are written, where
// streaming is on and j's chat can show them; else it returns nil.
func (r *Router) startAnswer(ctx context.Context, j laneJob) *stream.Answer {
	live, ok := r.opts.Channels[j.To.Platform].(channels.LiveAnswerer)
	if !r.opts.Stream || !ok || background(j.Session) {
		return nil
	}
	return stream.Start(ctx, stream.Options{Session: j.Session, To: j.To, Channel: live, ReplyTo: j.ReplyTo, Asker: platformUser(j.UserID, j.To.Platform),
		Store: r.opts.LiveStore, Scrub: r.opts.Scrub, Log: r.log.With("session", j.Session)})
}

// platformUser is the platform user id of identity when it is one of
// platform's ("" otherwise: a resumed run's approver, a job).
func platformUser(identity, platform string) string {
	user, ok := strings.CutPrefix(identity, platform+":")
	if !ok {
		return ""
	}
	return user
}

// runAgent runs the agent of j's session once, prepared by the session's
// owner when it is a background session, and records how the run ended.
func (r *Router) runAgent(ctx context.Context, j *laneJob, display *progress.Display) {
	agentName := r.agentOfSession(j.Session)
	agent, ok := r.runner(agentName)
	if !ok {
		// Answered (and stored) once, so recovery does not try again.
		r.failRun(ctx, *j, fmt.Errorf("%w: %s", errAgentGone, agentName))
		return
	}
	var last *agentcore.Reply // a background session's final reply
	in := r.runInput(j, agentName, display, &last)
	in.Model = r.chosenModel(ctx, j.To)
	owner := r.ownerOf(j.Session)
	if owner != nil {
		var stop func()
		ctx, stop = owner.Start(ctx, j.Session, &in)
		defer stop()
	}
	start := time.Now()
	res, err := agent.Run(ctx, in)
	if owner != nil && !r.reportToOwner(ctx, owner, j.Session, res, err, last, start) {
		return
	}
	r.recordRun(ctx, *j, res, err, start)
}

// chosenModel is the model chat was switched to, nil for the agent's own;
// when the choice cannot be read the run goes on with the agent's model.
func (r *Router) chosenModel(ctx context.Context, chat channels.Address) *agentcore.ModelChoice {
	if r.opts.Models == nil {
		return nil
	}
	m, err := r.opts.Models.ModelFor(ctx, chat)
	if err != nil {
		r.log.Warn("could not read the chat's chosen model; the agent's own answers", "chat", chat.String(), "error", err)
		return nil
	}
	return m
}

// runInput is what the agent of j's session runs with: its call, its
// progress steps, and where each reply goes (the outbox, or last for one
// that stays in its session). A stored reply clears j.ReplyTo.
func (r *Router) runInput(j *laneJob, agentName string, display *progress.Display, last **agentcore.Reply) agentcore.RunInput {
	call := sessionCall(j.Session, agentName, j.To, j.UserID, j.Direct)
	return agentcore.RunInput{Session: j.Session, Call: call, OnText: j.live.Text,
		OnStep: func(c agentcore.ToolCall) {
			display.Step(c)
			j.live.Step(c)
		},
		// A reply to the chat is stored with its outbox row, in one
		// transaction.
		StoreReply: func(ctx context.Context, after int64, reply agentcore.Message) (int64, int, error) {
			if undelivered(j.Session, reply.Content) {
				return r.opts.History.Insert(ctx, j.Session, after, reply)
			}
			text := reply.Content
			if strings.TrimSpace(text) == "" {
				text = noReplyFallback
			}
			// Only the first reply answers the message that started the
			// run; later ones answer messages that arrived meanwhile.
			// The answer shown so far is replaced by the reply, which is
			// stored with the messages it replaces.
			m := OutboxMessage{To: j.To, Text: text, ReplyTo: j.ReplyTo, Replaces: j.live.Finish(ctx)}
			seq, moved, err := r.out.storeReply(ctx, j.Session, after, reply, m)
			if err == nil {
				j.ReplyTo = ""
				j.live.Handed()
			}
			return seq, moved, err
		},
		OnReply: func(ctx context.Context, rep agentcore.Reply) {
			if undelivered(j.Session, rep.Text) {
				*last = &rep
			}
		}}
}

// reportToOwner tells the owner of a background session how its run
// ended (a failure is told by failRun, which records it first). It reports
// false when the owner cancelled the run: nothing else is recorded then.
func (r *Router) reportToOwner(ctx context.Context, owner SessionOwner, session string, res agentcore.RunResult, err error,
	last *agentcore.Reply, start time.Time) bool {
	switch {
	case errors.Is(context.Cause(ctx), ErrRunCancelled):
		r.opts.Metrics.AgentRun.WithLabelValues("cancelled").Observe(time.Since(start).Seconds())
		owner.Finished(ctx, session, Outcome{End: RunCancelled})
		return false
	case err == nil && res.Waiting == nil && last != nil:
		owner.Finished(ctx, session, Outcome{End: RunCompleted, Text: last.Text})
	case err == nil && res.Waiting != nil:
		owner.Finished(ctx, session, Outcome{End: RunParked})
	}
	return true
}

// recordRun counts how the run of j ended, records a failure, and answers
// a message that reached a run parked on an approval.
func (r *Router) recordRun(ctx context.Context, j laneJob, res agentcore.RunResult, err error, start time.Time) {
	switch {
	case err != nil && stoppedBy(ctx) != "":
		r.opts.Metrics.AgentRun.WithLabelValues("stopped").Observe(time.Since(start).Seconds())
		r.stopped(ctx, j, stoppedBy(ctx), start)
	case err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled):
		// Shutting down: the session stays unfinished and resumes later.
		r.opts.Metrics.AgentRun.WithLabelValues("cancelled").Observe(time.Since(start).Seconds())
	case err != nil:
		r.opts.Metrics.AgentRun.WithLabelValues("error").Observe(time.Since(start).Seconds())
		r.failRun(ctx, j, err)
	case res.Waiting != nil:
		r.opts.Metrics.AgentRun.WithLabelValues("parked").Observe(time.Since(start).Seconds())
		j.live.Leave(ctx, leaveText(*res.Waiting))
		if j.message && !res.Waiting.New {
			r.send(ctx, OutboxMessage{To: j.To, ReplyTo: j.ReplyTo, Text: waitingText(*res.Waiting, j.UserID, time.Now())})
		}
	case !res.Idle:
		r.opts.Metrics.AgentRun.WithLabelValues("ok").Observe(time.Since(start).Seconds())
	}
}

// waitingText answers a message from sender that arrives while the chat's
// run waits for an approval, or for the answer of the person it asked
// (w.For): their own message with files is not an answer.
func waitingText(w tools.Waiting, sender string, now time.Time) string {
	ago := now.Sub(w.Since).Round(time.Second)
	if w.For != "" && w.For == sender {
		return fmt.Sprintf("⏳ I'm waiting for your answer to my question (asked %s ago):\n%s\nReply with text (or press an option); I'll read this message after it.",
			ago, w.What)
	}
	if w.For != "" {
		return fmt.Sprintf("⏳ I'm waiting for %s's answer to my question (asked %s ago):\n%s\nI'll go on with your message when they answer.",
			w.For, ago, w.What)
	}
	return fmt.Sprintf("⏳ I'm waiting for an admin to approve this (asked %s ago):\n%s\nI'll go on with your message when they decide; /cancel withdraws the request.",
		ago, CommandBlock(w.What))
}

// leaveText is what the answer shown so far ends with when the run parks.
func leaveText(w tools.Waiting) string {
	if w.For != "" {
		return "⏸ Waiting for " + w.For + "'s answer."
	}
	return "⏸ Waiting for an approval."
}

// failRun records the failure in the session (so it is not retried in a
// loop) and tells the user briefly, with an id to find the details in logs.
// The record is a notice: the message counts as answered, but the model is
// never shown the apology as words of its own.
func (r *Router) failRun(ctx context.Context, j laneJob, err error) {
	id := ShortID()
	r.log.Error("agent run failed", "session", j.Session, "error_id", id, "err", r.opts.Scrub(err.Error()))
	text := fmt.Sprintf("Sorry, I couldn't answer that: %s (error id %s). %s", userReason(err), id, nextStep(err))
	msg := agentcore.Notice("run-failed:"+id, text)
	if !background(j.Session) {
		m := OutboxMessage{To: j.To, Text: text, ReplyTo: j.ReplyTo, Replaces: j.live.Finish(ctx)}
		if _, aerr := r.out.appendReply(ctx, j.Session, msg, m); aerr != nil {
			r.log.Error("record failure failed; telling the chat anyway", "session", j.Session, "err", aerr)
			r.send(ctx, OutboxMessage{To: j.To, Text: text, ReplyTo: j.ReplyTo})
		}
		return
	}
	if _, aerr := r.opts.History.Append(ctx, j.Session, msg); aerr != nil {
		r.log.Error("record failure failed", "session", j.Session, "err", aerr)
	}
	if owner := r.ownerOf(j.Session); owner != nil {
		owner.Finished(ctx, j.Session, Outcome{End: RunFailed, Reason: userReason(err), ErrorID: id})
	}
}

// errAgentGone: a session's agent is no longer in the config.
var errAgentGone = errors.New("agent not configured")

// userReason says in a few words what went wrong, without internals.
func userReason(err error) string {
	var pe *agentcore.ProviderError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "the model took too long"
	case errors.As(err, &pe) && pe.UnknownModel() && pe.Model == "":
		return "the model server does not know the configured model, so this agent is misconfigured"
	case errors.As(err, &pe) && pe.UnknownModel():
		return fmt.Sprintf("the model server does not know the model %q, so this agent is misconfigured", pe.Model)
	case errors.As(err, &pe) && pe.Status == 429:
		return "the model provider is rate limiting us"
	case errors.As(err, &pe) && (pe.Status == 401 || pe.Status == 403):
		return "the model provider refused our credentials"
	case errors.As(err, &pe):
		return "the model provider is unavailable"
	case errors.Is(err, errAgentGone):
		return "the agent of this conversation is not configured any more (ask an admin to add it back or change bindings)"
	}
	return "something went wrong on my side"
}

// nextStep says what the person can do about err: wait and try again,
// unless only an admin's change to the config can help.
func nextStep(err error) string {
	var pe *agentcore.ProviderError
	switch {
	case errors.As(err, &pe) && pe.UnknownModel():
		return "An admin must set llm.model (or this agent's model) to a model the server has; trying again will not help."
	case errors.Is(err, errAgentGone):
		return "Trying again will not help until an admin does."
	}
	return "Please try again in a moment."
}

// ShortID returns eight random hex digits: an error id a person can quote,
// or a subagent's id.
func ShortID() string {
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
	// While another run holds it: try again after 50 ms, doubling up to 1 s,
	// for at most wait.
	b := retry.WithMaxDuration(wait, retry.WithCappedDuration(time.Second, retry.NewExponential(50*time.Millisecond)))
	var lock Lock
	err := retry.Do(ctx, b, func(ctx context.Context) error {
		l, err := r.opts.Locker.Obtain(ctx, "lock:session:"+session, sessionLockTTL)
		switch {
		case err == nil:
			lock = l
		case errors.Is(err, ErrLocked):
			return retry.RetryableError(err)
		default:
			// Redis trouble: run anyway; Postgres sequencing keeps the
			// session consistent and the lane serialises this replica.
			// The store logs the outage once, so this is debug only.
			r.log.Debug("session lock unavailable, running unlocked", "session", session, "err", err)
		}
		return nil
	})
	switch {
	case err == nil:
		return lock, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	}
	return nil, fmt.Errorf("session %s: %w", session, err)
}
