package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/tools"
)

// JobSession returns the session key of job j's runs: agent/job:<name>.
func JobSession(agent, job string) string {
	return agentcore.SessionKey{Agent: agent, Scope: "job:" + job}.String()
}

// slotID identifies a slot's prompt in the job session (its ExternalID), so
// a taken-over run finds it instead of asking again.
func slotID(slot time.Time) string { return "slot:" + slot.UTC().Format(time.RFC3339Nano) }

// execute runs one claimed attempt of a job slot and records the outcome.
func (s *Scheduler) execute(ctx context.Context, j Job, run JobRun) {
	log := s.log.With("job", j.Name, "slot", run.ScheduledAt, "run_id", run.ID, "attempt", run.Attempts)
	if run.Attempts > s.o.MaxAttempts {
		s.finish(ctx, log, run, RunOutcome{Status: RunFailed,
			Error: fmt.Sprintf("gave up after %d attempts; %s", run.Attempts-1, run.Error)})
		return
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := s.renewWhileRunning(runCtx, cancel, run, log)
	defer stop()

	agent, runner, ok := s.o.Agents.Agent(j.Agent)
	if !ok || runner == nil {
		s.finish(ctx, log, run, RunOutcome{Status: RunFailed, Error: fmt.Sprintf("agent %q is not configured; fix the job's agent", j.Agent)})
		return
	}
	session := JobSession(agent, j.Name)
	prompt := agentcore.Message{Role: agentcore.RoleUser, ExternalID: slotID(run.ScheduledAt),
		Content: fmt.Sprintf("[scheduled job %q, slot %s]\n%s", j.Name, run.ScheduledAt.UTC().Format(time.RFC3339), j.Prompt)}
	if _, err := s.o.History.Append(runCtx, session, prompt); err != nil && !errors.Is(err, agentcore.ErrDuplicate) {
		s.retryOrFail(ctx, log, run, RunOutcome{}, err)
		return
	}
	call := tools.Call{Channel: j.Target.Platform, ChatID: j.Target.ChatID, ThreadID: j.Target.ThreadID,
		PeerKind: "group", UserID: j.CreatedBy, Session: session, Agent: agent}
	res, err := runner.Run(runCtx, agentcore.RunInput{Session: session, Call: call})
	usage := RunOutcome{TokensIn: res.Usage.InputTokens, TokensOut: res.Usage.OutputTokens}
	if ctx.Err() != nil {
		return // shutting down (or crashed): the lease expires and the slot is taken over
	}
	if err != nil {
		s.retryOrFail(ctx, log, run, usage, err)
		return
	}
	text, seq := res.Text, res.Seq
	if res.Waiting != nil {
		// Parked on an approval: the decision resumes the job's session
		// through the router, which delivers the reply to the target.
		log.Info("job run waits for an approval; its reply follows the decision", "waiting_for", res.Waiting.What)
	}
	if res.Idle {
		// A previous attempt got the reply; deliver that one.
		if text, seq, err = s.storedReply(ctx, session, prompt.ExternalID); err != nil {
			s.retryOrFail(ctx, log, run, usage, err)
			return
		}
	}
	usage.Status = RunSucceeded
	if strings.TrimSpace(text) != NoReply && strings.TrimSpace(text) != "" {
		if !s.deliver(ctx, log, run, usage, bot.OutboxMessage{Session: session, SourceSeq: seq, To: j.Target, Text: s.o.Scrub(text)}) {
			return
		}
	} else {
		s.finish(ctx, log, run, usage)
	}
	if sched, err := ParseSchedule(j.Schedule, j.Timezone); err == nil && sched.OneShot() {
		if err := s.o.Jobs.SetJobEnabled(ctx, j.Name, false); err != nil {
			log.Warn("could not disable spent one-shot job", "err", err)
		}
	}
}

// deliver finishes the run and queues its reply together, only while this
// replica still holds the run: after a lease loss the new owner delivers.
// It reports whether the run finished.
func (s *Scheduler) deliver(ctx context.Context, log *slog.Logger, run JobRun, out RunOutcome, reply bot.OutboxMessage) bool {
	err := s.o.Jobs.FinishWithReply(context.WithoutCancel(ctx), run.ID, s.o.Owner, out, reply)
	switch {
	case errors.Is(err, ErrLeaseLost):
		log.Warn("job run lost its lease before delivery", "err", err)
		return false
	case err != nil:
		s.retryOrFail(ctx, log, run, out, err)
		return false
	}
	s.o.Metrics.Runs.WithLabelValues(RunSucceeded).Inc()
	if s.o.Nudge != nil {
		s.o.Nudge()
	}
	return true
}

// storedReply returns the final reply the session holds for the slot whose
// prompt has externalID (the first final assistant message after it), and
// its seq.
func (s *Scheduler) storedReply(ctx context.Context, session, externalID string) (string, int64, error) {
	msgs, err := s.o.History.Load(ctx, session, 50)
	if err != nil {
		return "", 0, err
	}
	prompt := slices.IndexFunc(msgs, func(m agentcore.Message) bool {
		return m.Role == agentcore.RoleUser && m.ExternalID == externalID
	})
	if prompt < 0 {
		return "", 0, fmt.Errorf("session %s holds no prompt for %s", session, externalID)
	}
	for _, m := range msgs[prompt+1:] {
		if m.Role == agentcore.RoleAssistant && len(m.ToolCalls) == 0 && m.Seq > 0 {
			return m.Content, m.Seq, nil
		}
	}
	return "", 0, fmt.Errorf("session %s holds no final reply for %s", session, externalID)
}

// retryOrFail schedules another attempt with backoff, or fails the run for
// good after MaxAttempts.
func (s *Scheduler) retryOrFail(ctx context.Context, log *slog.Logger, run JobRun, out RunOutcome, cause error) {
	out.Error = s.o.Scrub(cause.Error())
	if run.Attempts >= s.o.MaxAttempts {
		out.Status = RunFailed
	} else {
		out.Status = RunPending
		out.RetryAt = time.Now().Add(bot.RetryDelay(s.o.RetryBase, run.Attempts))
		s.retryBy(out.RetryAt)
	}
	log.Warn("job run failed", "status", out.Status, "err", out.Error)
	s.finishOutcome(ctx, run, out)
}

func (s *Scheduler) finish(ctx context.Context, log *slog.Logger, run JobRun, out RunOutcome) {
	if out.Status == RunFailed {
		log.Warn("job run failed for good", "err", out.Error)
	}
	s.finishOutcome(ctx, run, out)
}

func (s *Scheduler) finishOutcome(ctx context.Context, run JobRun, out RunOutcome) {
	label := out.Status
	if label == RunPending {
		label = "retry"
	}
	if err := s.o.Jobs.FinishRun(context.WithoutCancel(ctx), run.ID, s.o.Owner, out); err != nil {
		s.log.Warn("record job run outcome failed", "run_id", run.ID, "err", err)
		return
	}
	s.o.Metrics.Runs.WithLabelValues(label).Inc()
}

// renewWhileRunning renews the run's lease every third of it; when the
// lease is lost it cancels the run. The returned func stops it.
func (s *Scheduler) renewWhileRunning(ctx context.Context, cancel context.CancelFunc, run JobRun, log *slog.Logger) func() {
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(s.o.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-done:
				return
			case <-t.C:
			}
			if err := s.o.Jobs.RenewLease(ctx, run.ID, s.o.Owner, s.o.Lease); errors.Is(err, ErrLeaseLost) {
				log.Warn("job run lost its lease; stopping", "err", err)
				cancel()
				return
			} else if err != nil && ctx.Err() == nil {
				log.Warn("renew job run lease failed", "err", err)
			}
		}
	}()
	return func() { close(done); <-stopped }
}
