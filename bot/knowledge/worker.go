package knowledge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot"
)

// The worker's defaults.
const (
	DefaultInterval    = 2 * time.Second
	DefaultLease       = 5 * time.Minute
	DefaultCallTimeout = 2 * time.Minute
	DefaultBatch       = 4
	DefaultMaxAttempts = 6
	// DefaultDeferral is how long a job waits after the budgets refused
	// its model call.
	DefaultDeferral = 10 * time.Minute
	// writeTimeout bounds each queue and facts write, which runs under a
	// context shutdown does not cancel.
	writeTimeout = 10 * time.Second
)

// Model is what extracts the facts of an agent's documents: a provider, the
// model on it, and the most tokens an answer may take (0: DefaultMaxTokens).
type Model struct {
	Provider  agentcore.Provider
	Name      string
	MaxTokens int
}

// Models returns the Model for an agent's documents; an error means the
// agent is not configured (any more).
type Models func(agent string) (Model, error)

// Options configures the Worker; zero durations and counts take the
// defaults above.
type Options struct {
	Store  JobStore
	Models Models
	// Meter is asked before every extraction call and told its usage, as
	// for the agents' own calls; nil meters nothing.
	Meter  agentcore.Meter
	Logger *slog.Logger
	// Interval is how often an idle worker looks for due jobs.
	Interval time.Duration
	// Lease is how long a claimed job is this worker's; longer than
	// CallTimeout, so a job in flight is not claimed twice.
	Lease       time.Duration
	CallTimeout time.Duration
	Batch       int
	MaxAttempts int
	// Backoff is the wait after the n-th failed attempt; nil doubles from
	// 30 s up to 30 min.
	Backoff  func(n int) time.Duration
	Deferral time.Duration
}

// Worker extracts the facts of queued memory documents. Every replica runs
// one: jobs are claimed with a lease, so each is worked on by one at a
// time.
type Worker struct {
	o   Options
	log *slog.Logger
}

// NewWorker returns a Worker for o.
func NewWorker(o Options) *Worker {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.Interval = orDefault(o.Interval, DefaultInterval)
	o.Lease = orDefault(o.Lease, DefaultLease)
	o.CallTimeout = orDefault(o.CallTimeout, DefaultCallTimeout)
	o.Deferral = orDefault(o.Deferral, DefaultDeferral)
	o.Batch = orDefault(o.Batch, DefaultBatch)
	o.MaxAttempts = orDefault(o.MaxAttempts, DefaultMaxAttempts)
	if o.Backoff == nil {
		o.Backoff = defaultBackoff
	}
	return &Worker{o: o, log: o.Logger.With("component", "knowledge")}
}

func orDefault[T time.Duration | int](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// defaultBackoff waits 30 s after the first failure, doubling up to 30 min.
func defaultBackoff(n int) time.Duration {
	d := 30 * time.Second
	for i := 1; i < n && d < 30*time.Minute; i++ {
		d *= 2
	}
	return min(d, 30*time.Minute)
}

// Run works on due jobs until ctx ends. A job in flight when it ends is
// handed back (due at once, its attempt not counted), so the next start or
// another replica takes it; one whose hand-back fails waits out its lease.
func (w *Worker) Run(ctx context.Context) {
	bot.RepeatPaced(ctx, w.log, "knowledge extraction", w.Pass, func() time.Duration { return w.o.Interval }, nil)
}

// Pass claims and works on due jobs, a batch at a time, until none is
// left or ctx ends.
func (w *Worker) Pass(ctx context.Context) error {
	for ctx.Err() == nil {
		jobs, err := w.o.Store.ClaimJobs(ctx, w.o.Batch, w.o.Lease, w.o.MaxAttempts)
		if err != nil {
			return err
		}
		for i, j := range jobs {
			if ctx.Err() != nil {
				w.handBack(ctx, jobs[i:])
				return nil
			}
			w.work(ctx, j)
		}
		if len(jobs) < w.o.Batch {
			return nil
		}
	}
	return nil
}

// work extracts and stores one job's facts, or schedules its retry.
func (w *Worker) work(ctx context.Context, j Job) {
	log := w.log.With("agent", j.Key.Agent, "scope", j.Key.Scope, "path", j.Key.Path, "attempt", j.Attempts)
	if !j.Exists {
		w.finish(ctx, log, j) // deleted since: its facts went with it
		return
	}
	facts, err := w.extract(ctx, j)
	var refused *agentcore.RefusedError
	var invalid *invalidAnswer
	switch {
	case err == nil:
		w.store(ctx, log, j, facts)
	case ctx.Err() != nil:
		w.handBack(ctx, []Job{j})
	case errors.As(err, &refused):
		log.Info("knowledge extraction refused by a budget; will try again later", "retry_in", w.o.Deferral.String(), "reason", refused.Reply)
		w.retry(ctx, log, j, w.o.Deferral, true, "budget: "+refused.Reply)
	case errors.As(err, &invalid):
		// A broken or hostile answer is dropped whole; asking again for the
		// same document would most likely get the same.
		log.Warn("knowledge extraction answer refused; the document's facts are unchanged", "err", invalid.err, "stop_reason", invalid.stop)
		w.finish(ctx, log, j)
	default:
		w.failed(ctx, log, j, err)
	}
}

// store replaces the document's facts, under a context shutdown does not
// cancel (the model call is paid for), and finishes the job.
func (w *Worker) store(ctx context.Context, log *slog.Logger, j Job, facts Facts) {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	applied, err := w.o.Store.ReplaceFacts(wctx, j.Key, j.Hash, facts)
	switch {
	case err != nil:
		w.failed(ctx, log, j, fmt.Errorf("store the facts: %w", err))
		return
	case applied:
		log.Info("knowledge extracted", "entities", len(facts.Entities), "relations", len(facts.Relations))
	default:
		log.Debug("knowledge extraction outdated: the document changed meanwhile; its newer version is queued")
	}
	w.finish(ctx, log, j)
}

// failed schedules j's next attempt after its backoff, or gives up after
// the last one: the row stays, unclaimed, with its error, until the
// document is written again.
func (w *Worker) failed(ctx context.Context, log *slog.Logger, j Job, err error) {
	if j.Attempts >= w.o.MaxAttempts {
		log.Error("knowledge extraction gave up; the document's facts are unchanged until it is written again", "err", err)
		w.retry(ctx, log, j, 0, false, err.Error())
		return
	}
	delay := w.o.Backoff(j.Attempts)
	log.Warn("knowledge extraction failed; will try again", "retry_in", delay.String(), "err", err)
	w.retry(ctx, log, j, delay, false, err.Error())
}

// finish removes j from the queue.
func (w *Worker) finish(ctx context.Context, log *slog.Logger, j Job) {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	if err := w.o.Store.FinishJob(wctx, j); err != nil {
		log.Warn("knowledge job not removed from the queue; it will run again when its lease lapses", "err", err)
	}
}

// retry makes j due again after delay.
func (w *Worker) retry(ctx context.Context, log *slog.Logger, j Job, delay time.Duration, refund bool, reason string) {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	if err := w.o.Store.RetryJob(wctx, j, delay, refund, reason); err != nil {
		log.Warn("knowledge job not rescheduled; it will run again when its lease lapses", "err", err)
	}
}

// handBack returns claimed jobs to the queue, due at once, their attempts
// not counted: the worker is stopping.
func (w *Worker) handBack(ctx context.Context, jobs []Job) {
	for _, j := range jobs {
		w.retry(ctx, w.log.With("path", j.Key.Path), j, 0, true, "the worker stopped")
	}
}

// invalidAnswer is a model answer ParseFacts refused, with the reason the
// model stopped ("length" or "max_tokens": cut at its token bound).
type invalidAnswer struct {
	err  error
	stop string
}

func (e *invalidAnswer) Error() string { return fmt.Sprintf("invalid extraction answer: %v", e.err) }
