package jobs

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot"
)

// SchedulerOptions wires a Scheduler. Jobs, History and Agents are
// required; replies go to the outbox through Jobs (FinishWithReply).
type SchedulerOptions struct {
	Jobs    Store
	History agentcore.History
	// Agents runs each job's prompt on the agent the job names ("" is
	// the default agent); the daemon passes its Router.
	Agents bot.Agents
	// Owner names this replica on run leases; it must differ per replica.
	Owner string
	// Liveness, when set, keeps Owner's heartbeat while a run is claimed,
	// so a replica that dies mid-run has its run taken over at once; nil:
	// only when the lease expires. The dispatcher's, shared.
	Liveness *bot.Liveness
	// Tick is how often jobs are checked at the least (default 5s): in
	// between the scheduler sleeps until the earliest next due time of
	// any job (as the store had it at the last check), a retry it
	// scheduled, or a Wake (a job was added or changed here). The check
	// finds the rest: jobs changed on another replica, runs of a replica
	// that died.
	Tick time.Duration
	// Lease is how long a claimed run is held without renewal (default
	// 60s); a replica that dies mid-run leaves it to expire.
	Lease time.Duration
	// Grace is how late a slot may still start as on time (default 30s);
	// older slots are missed and follow the job's catch-up policy.
	Grace time.Duration
	// CatchUpWindow bounds catch_up "last" (default 1h).
	CatchUpWindow time.Duration
	// MaxAttempts per slot before it fails for good (default 3).
	MaxAttempts int
	// RetryBase is the first retry delay, doubled per attempt up to 5m
	// (default 5s).
	RetryBase time.Duration
	// KeepRuns is how long finished runs stay on record (default
	// DefaultJobRunKeep; negative keeps them forever), when Jobs is a
	// JobRunPruner. Each job's newest run stays whatever its age.
	KeepRuns time.Duration
	// Nudge, when set, wakes the outbox dispatcher after a reply is queued.
	Nudge func()
	// Scrub removes configured secrets from outgoing text; nil: identity.
	Scrub   func(string) string
	Metrics *SchedulerMetrics
	Logger  *slog.Logger
}

// Scheduler runs cron jobs: each slot of each enabled job exactly once
// across replicas and restarts. A slot is claimed durably (one run row per
// job and slot) under a lease the running replica renews; a slot whose
// replica died is taken over when its lease expires and resumes from the
// persisted job session. Replies are queued to the outbox keyed by the
// reply's session seq, so a taken-over run never delivers twice.
type Scheduler struct {
	o   SchedulerOptions
	log *slog.Logger

	mu      sync.Mutex
	active  map[int64]bool // run id → executing here
	nextAt  time.Time      // when the next check is due (zero: after Tick)
	retryAt time.Time      // the earliest retry scheduled here, until checked
	wake    chan struct{}
	// base is Run's context, which the runs RunNow starts execute under
	// (not the context of the command that asked); nil until Run.
	base context.Context
	wg   sync.WaitGroup
	// pruneEvery is how often finished runs are pruned (bot.PruneEvery;
	// tests shorten it).
	pruneEvery time.Duration
}

// busyRecheck is how soon a slot that could not be claimed (busy, or the
// store failing) is tried again.
const busyRecheck = 500 * time.Millisecond

// NewScheduler returns a Scheduler; call Run to start it.
func NewScheduler(o SchedulerOptions) *Scheduler {
	if o.Tick <= 0 {
		o.Tick = 5 * time.Second
	}
	if o.Lease <= 0 {
		o.Lease = 60 * time.Second
	}
	if o.Grace <= 0 {
		o.Grace = 30 * time.Second
	}
	if o.CatchUpWindow <= 0 {
		o.CatchUpWindow = time.Hour
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 3
	}
	if o.RetryBase <= 0 {
		o.RetryBase = 5 * time.Second
	}
	if o.KeepRuns == 0 {
		o.KeepRuns = DefaultJobRunKeep
	}
	if o.Scrub == nil {
		o.Scrub = func(s string) string { return s }
	}
	if o.Metrics == nil {
		o.Metrics = NewSchedulerMetrics(nil)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Scheduler{o: o, log: o.Logger.With("owner", o.Owner),
		active: map[int64]bool{}, wake: make(chan struct{}, 1), pruneEvery: bot.PruneEvery}
}

// Wake makes the scheduler check its jobs now (one was added or changed).
func (s *Scheduler) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// checkBy moves the next check to t at the latest.
func (s *Scheduler) checkBy(t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.nextAt.IsZero() || t.Before(s.nextAt) {
		s.nextAt = t
	}
}

// untilCheck is how long Run sleeps: until the next known slot or retry,
// at most Tick.
func (s *Scheduler) untilCheck() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	wait := s.o.Tick
	for _, t := range []time.Time{s.nextAt, s.retryAt} {
		if !t.IsZero() {
			wait = min(wait, max(time.Until(t), time.Millisecond))
		}
	}
	return wait
}

// retryBy makes sure the scheduler checks at t, when a retry comes due.
func (s *Scheduler) retryBy(t time.Time) {
	s.mu.Lock()
	if s.retryAt.IsZero() || t.Before(s.retryAt) {
		s.retryAt = t
	}
	s.mu.Unlock()
	s.Wake() // Run sleeps until then instead
}

// Run checks jobs every Tick until ctx ends, then waits for the runs it
// started. Runs cut short by ctx keep their lease, which expires so another
// replica (or this one after a restart) finishes them. Once an hour it
// prunes finished runs older than KeepRuns (see JobRunPruner).
func (s *Scheduler) Run(ctx context.Context) {
	defer s.wg.Wait()
	s.mu.Lock()
	s.base = ctx
	s.mu.Unlock()
	if p, ok := s.o.Jobs.(JobRunPruner); ok && s.o.KeepRuns > 0 {
		s.wg.Go(func() { s.runsPruning(p).Loop(ctx) })
	}
	bot.RepeatPaced(ctx, s.log, "scheduler check", s.Tick, s.untilCheck, s.wake)
}

// claimBatch is how many due jobs one claim locks and plans.
const claimBatch = 200

// Tick runs one check: it takes over runs whose lease expired or whose
// retry is due, then claims the slots that came due, a batch of jobs at a
// time, from the jobs' next due times in the store (never listing every
// job). Claimed runs execute in the background.
func (s *Scheduler) Tick(ctx context.Context) error {
	s.mu.Lock()
	s.nextAt = time.Time{}
	if !s.retryAt.After(time.Now()) {
		s.retryAt = time.Time{} // due: DueRuns below finds it
	}
	s.mu.Unlock()
	if err := s.takeOver(ctx); err != nil {
		return err
	}
	for {
		n, err := s.claimDue(ctx)
		if err != nil {
			return err
		}
		if n < claimBatch {
			break
		}
	}
	next, err := s.o.Jobs.NextDue(ctx)
	if err != nil {
		return err
	}
	if !next.IsZero() {
		// A due time already past belongs to a queued job waiting for its
		// previous run: look again soon rather than at once.
		s.checkBy(maxTime(next, time.Now().Add(busyRecheck)))
	}
	return nil
}

// takeOverBatch is how many runs needing an owner one look lists,
// takeOverPages how many looks one check makes at most (the next check
// follows at once when there may be more), and takeOverParallel how many
// of a page's runs are claimed at once.
const (
	takeOverBatch    = 100
	takeOverPages    = 100
	takeOverParallel = 8
)

// takeOver claims the runs that need an owner: a dead replica's, or a
// retry that came due. A replica that died mid-slot can leave thousands:
// it pages on while a full page gave it any, so they are all taken over
// within one check rather than a hundred per check, and it claims a page's
// runs several at a time, since each claim is a few round trips of its own.
func (s *Scheduler) takeOver(ctx context.Context) error {
	for page := 0; ; page++ {
		if page == takeOverPages {
			s.checkBy(time.Now())
			return nil
		}
		due, err := s.o.Jobs.DueRuns(ctx, takeOverBatch)
		if err != nil {
			return err
		}
		var (
			took  atomic.Int32
			wg    sync.WaitGroup
			slots = make(chan struct{}, takeOverParallel)
		)
		for _, r := range due {
			if s.isActive(r.ID) {
				continue
			}
			slots <- struct{}{}
			wg.Go(func() {
				defer func() { <-slots }()
				if s.takeOverRun(ctx, r) {
					took.Add(1)
				}
			})
		}
		wg.Wait()
		if len(due) < takeOverBatch || took.Load() == 0 || ctx.Err() != nil {
			return nil
		}
	}
}

// takeOverRun claims run r, which needs an owner, and starts it; it
// reports whether it did.
func (s *Scheduler) takeOverRun(ctx context.Context, r JobRun) bool {
	j, err := s.o.Jobs.GetJob(ctx, r.JobName)
	if err != nil {
		s.log.Warn("job of a due run not found", "job", r.JobName, "err", err)
		return false
	}
	return s.claim(ctx, j, r.ScheduledAt)
}

// claimDue claims one batch of due slots and starts their runs; it
// returns how many jobs the batch locked.
func (s *Scheduler) claimDue(ctx context.Context) (int, error) {
	var (
		claimed []ClaimedRun
		locked  int
		err     error
	)
	now := time.Now()
	claimBatchFn := func(beat bool) bool {
		claimed, locked, err = s.o.Jobs.ClaimDue(ctx, ClaimDueOptions{Owner: s.o.Owner, Lease: s.o.Lease,
			Limit: claimBatch, Now: now, Beat: beat}, func(j DueJob) SlotPlan { return s.plan(j, now) })
		return err == nil && len(claimed) > 0
	}
	if s.o.Liveness != nil {
		// One heartbeat hold per claimed run, each released when its run ends.
		s.o.Liveness.Claim(claimBatchFn, func() {
			for range claimed {
				s.o.Liveness.Hold()
			}
		})
	} else {
		claimBatchFn(false)
	}
	if err != nil {
		return 0, err
	}
	for _, c := range claimed {
		s.start(ctx, c.Job, c.Run)
	}
	return locked, nil
}

// plan is the SlotPlan of a due job at now; a schedule that no longer
// parses stops the job from firing (fixing it plans it again).
func (s *Scheduler) plan(j DueJob, now time.Time) SlotPlan {
	sched, err := ParseSchedule(j.Schedule, j.Timezone)
	if err != nil {
		s.log.Warn("job schedule does not parse; the job will not run until it is fixed", "job", j.Name, "err", err)
		return SlotPlan{Handled: j.LastSlot}
	}
	return planSlots(j, sched, now, s.o.Grace, s.o.CatchUpWindow)
}

// WatchJobs returns store with writes that change what runs when (a job
// upserted, paused or resumed) waking the scheduler.
func (s *Scheduler) WatchJobs(store Store) Store { return watchedJobs{Store: store, s: s} }

type watchedJobs struct {
	Store
	s *Scheduler
}

func (w watchedJobs) UpsertJob(ctx context.Context, j Job) (Job, error) {
	out, err := w.Store.UpsertJob(ctx, j)
	if err == nil {
		w.s.Wake()
	}
	return out, err
}

func (w watchedJobs) SetJobEnabled(ctx context.Context, name string, enabled bool) error {
	err := w.Store.SetJobEnabled(ctx, name, enabled)
	if err == nil {
		w.s.Wake()
	}
	return err
}

// dueSlots returns the slots in (cursor, now] to run: every on-time slot
// (at most grace old), or when there is none and catchUp is "last", the
// newest missed one within window. examined is the newest slot looked at.
func dueSlots(sched Schedule, catchUp string, cursor, now time.Time, grace, window time.Duration) (slots []time.Time, examined time.Time) {
	if floor := now.Add(-(window + grace)); cursor.Before(floor) {
		cursor = floor
	}
	var missed time.Time
	for t, n := sched.Next(cursor), 0; !t.IsZero() && !t.After(now) && n < 100000; t, n = sched.Next(t), n+1 {
		examined = t
		if now.Sub(t) <= grace {
			slots = append(slots, t)
		} else {
			missed = t
		}
	}
	if len(slots) == 0 && !missed.IsZero() && catchUp != CatchUpNone && now.Sub(missed) <= window {
		slots = []time.Time{missed}
	}
	return slots, examined
}

// claim tries to claim slot of j and starts its run when claimed. It
// reports whether the caller may move on past the slot.
func (s *Scheduler) claim(ctx context.Context, j Job, slot time.Time) bool {
	run, claimed, err := s.claimSlot(ctx, j, slot, j.Overlap)
	switch {
	case errors.Is(err, ErrSlotBusy):
		return false
	case err != nil:
		if ctx.Err() == nil {
			s.log.Warn("claim job slot failed", "job", j.Name, "slot", slot, "err", err)
		}
		return false
	case !claimed:
		return true
	}
	s.start(ctx, j, run)
	return true
}

// claimSlot claims slot of j for this replica under overlap. Pinned, the
// heartbeat cannot end during the claim; when there is none, the claim
// writes it if it claims the slot, so the run is covered from its first
// moment, and a replica that loses the slot to another writes nothing
// (see bot.Liveness).
func (s *Scheduler) claimSlot(ctx context.Context, j Job, slot time.Time, overlap string) (run JobRun, claimed bool, err error) {
	claim := func(beat bool) bool {
		run, claimed, err = s.o.Jobs.ClaimSlot(ctx, j.ID, slot, s.o.Owner, s.o.Lease, overlap, beat)
		return err == nil && claimed
	}
	if s.o.Liveness != nil {
		s.o.Liveness.Claim(claim, s.o.Liveness.Hold)
	} else {
		claim(false)
	}
	return run, claimed, err
}

// RunNow runs job name once now on this replica (/jobs run, the console's
// Run now): an extra slot at the current second, claimed and started like
// a due one, so it is one run with one attempt. It returns bot.ErrNotFound
// without such a job and ErrSlotBusy while a run of it goes; a second
// request in the same second finds the run started and does nothing.
func (s *Scheduler) RunNow(ctx context.Context, name string) error {
	s.mu.Lock()
	base := s.base
	s.mu.Unlock()
	if base == nil || base.Err() != nil {
		return errors.New("the scheduler is not running on this replica")
	}
	j, err := s.o.Jobs.GetJob(ctx, name)
	if err != nil {
		return err
	}
	run, claimed, err := s.claimSlot(ctx, j, time.Now().Truncate(time.Second), OverlapQueue)
	if err != nil || !claimed {
		return err
	}
	s.start(base, j, run)
	return nil
}

// start executes a claimed run in the background; with Liveness, the
// claim took a Hold that the run releases when it ends.
func (s *Scheduler) start(ctx context.Context, j Job, run JobRun) {
	if run.Attempts == 1 && run.Status == RunRunning {
		s.o.Metrics.Lag.Observe(time.Since(run.ScheduledAt).Seconds())
	}
	s.setActive(run.ID, true)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if s.o.Liveness != nil {
			defer s.o.Liveness.Release()
		}
		defer s.setActive(run.ID, false)
		if j.Overlap == OverlapQueue {
			defer s.Wake() // a slot waiting for this run is planned now
		}
		s.execute(ctx, j, run)
	}()
}

func (s *Scheduler) isActive(runID int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active[runID]
}

func (s *Scheduler) setActive(runID int64, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if on {
		s.active[runID] = true
	} else {
		delete(s.active, runID)
	}
}
