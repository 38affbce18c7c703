package bot

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Heartbeats records which processes are alive and holding work, so that
// another replica takes over the work of one that died at once instead of
// after a lease. Postgres implements it.
type Heartbeats interface {
	// Heartbeat says owner is alive. Outbox rows and job runs claimed by
	// an owner whose heartbeat went stale are claimed again at once
	// (their sends are in doubt), instead of waiting for their lease.
	Heartbeat(ctx context.Context, owner string) error
	// EndHeartbeat says owner holds nothing that needs its heartbeat: its
	// heartbeat is forgotten, and what it claims from now on until its
	// next Heartbeat is taken over only when the claim's lease runs out.
	EndHeartbeat(ctx context.Context, owner string) error
}

// Liveness keeps this process's heartbeat while it holds claimed work
// (outbox rows being sent, job runs), and none while it holds nothing.
//
// A heartbeat that is present but stale tells other replicas the owner
// died, and they claim its work again at once; a heartbeat that is absent
// tells them nothing, and they wait for each claim's lease. So Liveness
// never leaves a stale heartbeat behind while the process lives: when the
// last hold is released (and Linger has passed) it ends the heartbeat
// before it stops beating. Work is not claimed while there is no
// heartbeat (unless writing one fails; the claim's lease covers it then):
// rows written already claimed are reserved after Cover, which beats
// first when there is none, and the dispatcher's and the scheduler's
// claims are made under Pin, whose answer tells the claim to write the
// heartbeat itself, in the same statement, when it claims anything (a
// replica that loses a slot to another writes nothing). So work is taken
// over at once even when its replica dies a moment after the claim. A
// process that dies while holding leaves a heartbeat that goes stale, and
// its work is taken over within seconds. An idle daemon thus makes no
// heartbeat statement at all: only holding work needs one.
type Liveness struct {
	o LivenessOptions

	mu       sync.Mutex
	holds    int
	pins     int           // claims under way (Pin): the heartbeat may not end
	released time.Time     // when holds last dropped to 0
	wake     chan struct{} // a hold began while Run waits

	// store serialises the heartbeat statements; beatAt is when the last
	// beat worked and coverFailed when a Cover's beat last failed (both
	// l.store held).
	store       sync.Mutex
	beatAt      time.Time
	coverFailed time.Time
	// present is whether a heartbeat is stored: set once a Heartbeat
	// worked (l.store held), cleared when end decides to end it (l.store
	// and l.mu held). While anything is held or pinned it is not cleared.
	present atomic.Bool
}

// LivenessOptions configures a Liveness.
type LivenessOptions struct {
	Store Heartbeats
	Owner string // this process's name, as on its claims
	// Interval between heartbeats while held (default 1 s).
	Interval time.Duration
	// Linger is how long heartbeats go on after the last hold is released
	// (default 10 s), so a burst of messages does not end and begin the
	// heartbeat between each.
	Linger time.Duration
	Logger *slog.Logger
}

// NewLiveness returns a Liveness; it beats only while Run runs.
func NewLiveness(o LivenessOptions) *Liveness {
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.Linger <= 0 {
		o.Linger = 10 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Liveness{o: o, wake: make(chan struct{}, 1)}
}

// Hold counts one more piece of claimed work; Release ends it. Call Hold
// once the work is claimed: the first beat follows at once.
func (l *Liveness) Hold() {
	l.mu.Lock()
	l.holds++
	first := l.holds == 1
	l.mu.Unlock()
	if first {
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
}

// Cover makes sure a heartbeat is stored before work is claimed: when
// there may be none (it ended, or never began) it beats before it returns;
// otherwise it costs nothing. Call it while holding, so the heartbeat
// cannot end meanwhile. A claim made after it is covered at once: if the
// process dies a moment later, other replicas take the work over within
// seconds instead of waiting for its lease. A failed beat is logged and
// the claim goes ahead, covered by its lease as before. A beat waits at
// most Interval, and after one failed, Covers for the next Interval do not
// try again: while PostgreSQL is down, replies do not queue up behind one
// another's heartbeats.
func (l *Liveness) Cover(ctx context.Context) {
	if l.present.Load() {
		return
	}
	l.store.Lock()
	defer l.store.Unlock()
	if l.present.Load() || time.Since(l.coverFailed) < l.o.Interval {
		return
	}
	bctx, cancel := context.WithTimeout(ctx, l.o.Interval)
	defer cancel()
	if !l.beatLocked(bctx) {
		l.coverFailed = time.Now()
	}
}

// Pin keeps the heartbeat from ending, without beating, until Unpin, and
// reports whether one is stored. A claim made under it that finds work
// while none is stored must write the heartbeat itself, in the claim's
// statement (see Outbox.Claim), say so with Beaten, and Hold what it
// claimed before Unpin. An idle daemon's polls pin, claim nothing and
// write nothing more.
//
// While a heartbeat is stored Pin costs a mutex: no end was decided before
// it (an end counts the heartbeat absent as it decides) and none can be
// while it lasts. Otherwise it waits for a heartbeat statement under way:
// an end decided before it must have deleted the heartbeat before the
// claim writes one, or the delete would remove the claim's.
func (l *Liveness) Pin() (covered bool) {
	l.mu.Lock()
	l.pins++
	covered = l.present.Load()
	l.mu.Unlock()
	if covered {
		return true
	}
	l.store.Lock()
	defer l.store.Unlock()
	return l.present.Load()
}

// Claim runs claim with the heartbeat pinned (Pin … Unpin), the way work
// is claimed. claim gets beat, true when no heartbeat is stored: its
// statement must then write one should it claim anything. It reports
// whether its statement succeeded and claimed something; then the
// heartbeat counts as written when claim wrote it (Beaten), and claimed
// runs, still pinned: it must Hold what was claimed (Hold comes after
// Beaten, so Run, woken by it, finds the heartbeat fresh).
func (l *Liveness) Claim(claim func(beat bool) bool, claimed func()) {
	beat := !l.Pin()
	defer l.Unpin()
	if !claim(beat) {
		return
	}
	if beat {
		l.Beaten()
	}
	claimed()
}

// Beaten records that a claim made under Pin wrote the heartbeat in its
// own statement (it found work while none was stored): the heartbeat now
// counts as stored, and Run, woken by the claim's Hold, does not write
// another at once. Call it before Unpin, and only when the claim's
// statement succeeded and claimed something.
func (l *Liveness) Beaten() {
	l.store.Lock()
	defer l.store.Unlock()
	l.storedLocked()
}

// storedLocked records a heartbeat just written; l.store is held.
func (l *Liveness) storedLocked() {
	l.present.Store(true)
	l.beatAt = time.Now()
}

// Unpin ends one Pin.
func (l *Liveness) Unpin() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pins <= 0 {
		panic("bot: Liveness.Unpin without Pin")
	}
	l.pins--
}

// beatLocked writes a heartbeat and reports whether it did; l.store is
// held. A failure is logged unless the caller gave up (shutdown).
func (l *Liveness) beatLocked(ctx context.Context) bool {
	if err := l.o.Store.Heartbeat(ctx, l.o.Owner); err != nil {
		if !errors.Is(ctx.Err(), context.Canceled) {
			l.o.Logger.Debug("heartbeat failed", "err", err)
		}
		return false
	}
	l.storedLocked()
	return true
}

// Release ends one Hold.
func (l *Liveness) Release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.holds <= 0 {
		panic("bot: Liveness.Release without Hold")
	}
	l.holds--
	if l.holds == 0 {
		l.released = time.Now()
	}
}

// Run keeps the heartbeat while anything is held, until ctx ends; call it
// once. While nothing is held it waits without waking.
func (l *Liveness) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.wake:
		}
		if !l.beatWhileHeld(ctx) {
			return
		}
	}
}

// beatWhileHeld beats every Interval until nothing has been held for
// Linger and the heartbeat is ended; it reports false when ctx ended first
// (the heartbeat is left to go stale, as a crash would leave it).
func (l *Liveness) beatWhileHeld(ctx context.Context) bool {
	for {
		l.store.Lock()
		if !l.present.Load() || time.Since(l.beatAt) >= l.o.Interval/2 {
			l.beatLocked(ctx) // not when a Cover has just beaten
		}
		l.store.Unlock()
		t := time.NewTimer(l.o.Interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
		if ended, err := l.end(ctx); err != nil {
			// Still there: keep it fresh and try again at the next heartbeat.
			if ctx.Err() == nil {
				l.o.Logger.Debug("ending the heartbeat failed", "err", err)
			}
			continue
		} else if !ended {
			continue
		}
		if !l.idle() {
			continue // held again while it ended: beat again at once
		}
		return true
	}
}

// end ends the heartbeat when nothing has been held for Linger and no
// claim is under way, and reports whether it did. The heartbeat counts as
// absent from the moment end decides, under l.mu: a Hold or Pin comes
// either before that and keeps the heartbeat, or after it and finds it
// absent (Cover and Pin then wait for the delete). When the delete
// fails the heartbeat counts as absent until the next beat, so a Cover
// meanwhile beats once more than it needs to.
func (l *Liveness) end(ctx context.Context) (bool, error) {
	l.store.Lock()
	defer l.store.Unlock()
	l.mu.Lock()
	ending := l.pins == 0 && l.idleLocked()
	if ending {
		l.present.Store(false)
	}
	l.mu.Unlock()
	if !ending {
		return false, nil
	}
	if err := l.o.Store.EndHeartbeat(ctx, l.o.Owner); err != nil {
		return false, err
	}
	return true, nil
}

// idle reports whether nothing has been held for Linger.
func (l *Liveness) idle() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.idleLocked()
}

// idleLocked is idle with l.mu held. A wake-up left by a Hold that came
// and went meanwhile is dropped with it.
func (l *Liveness) idleLocked() bool {
	if l.holds > 0 || time.Since(l.released) < l.o.Linger {
		return false
	}
	select {
	case <-l.wake:
	default:
	}
	return true
}
