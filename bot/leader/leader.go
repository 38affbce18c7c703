// Package leader runs a task on one replica at a time: the platform
// pollers that a platform allows only once per bot (Telegram's getUpdates
// poller and its webhook registration, Discord's gateway). Leadership is
// a bot.LeaderLock (PostgreSQL's advisory locks implement it); a Leader
// seeks it, runs the task while it holds it and steps down when it is
// lost.
//
// Imports flow one way: leader imports bot; bot never imports leader.
package leader

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
)

// DefaultInterval is how often a leader checks its lease and a standby
// replica asks for leadership.
const DefaultInterval = 2 * time.Second

// Leader runs a task on one replica at a time, the one holding a
// bot.LeaderLock. Telegram allows a single getUpdates poller per bot
// token, so with several replicas only the leader polls; every replica
// still sends.
type Leader struct {
	// Lock grants the leadership.
	Lock bot.LeaderLock
	// Key names the leadership: one leader per key across replicas.
	Key string
	// Interval is how often the lease is checked and leadership sought
	// (default DefaultInterval).
	Interval time.Duration
	// Logger receives leadership changes; nil discards them.
	Logger  *slog.Logger
	held    atomic.Bool
	standby atomic.Bool
}

// Held reports whether this replica leads right now.
func (l *Leader) Held() bool { return l.held.Load() }

// Standby reports whether another replica led at the last ask. Neither
// Held nor Standby: leadership was not sought yet, or the lock service
// could not be asked.
func (l *Leader) Standby() bool { return l.standby.Load() }

// Run calls fn while this replica leads, waiting for leadership
// otherwise, until ctx ends. fn's context is cancelled when the lease is
// lost; when fn returns leadership is given up and, after a pause, sought
// again. A replica that takes leadership over from another (it stood by
// before) waits one and a half intervals before it calls fn, so that the
// other, which checks its lease every interval, has stopped its fn even
// when its lock ended without it knowing (its connection died). Each state
// is logged once: "another replica leads" when standing
// by, one warning when the lock service becomes unreachable and one line
// when it is back.
func (l *Leader) Run(ctx context.Context, fn func(context.Context) error) {
	interval := l.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	log := l.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("key", l.Key)
	var standby bool
	var downSince time.Time // when the lock service became unreachable; zero while it answers
	for ctx.Err() == nil {
		lease, ok, err := l.Lock.TryLead(ctx, l.Key)
		if err != nil && ctx.Err() != nil {
			return
		}
		switch {
		case err != nil:
			if downSince.IsZero() {
				downSince = time.Now()
				log.Warn("leader lock unavailable; not leading until it is back", "err", err)
			}
		case !downSince.IsZero():
			log.Info("leader lock available again", "outage_ms", time.Since(downSince).Milliseconds())
			downSince = time.Time{}
		}
		if err != nil || !ok {
			l.standby.Store(err == nil && !ok)
			if err == nil && !standby {
				log.Info("another replica leads; standing by")
				standby = true
			}
			if !bot.Sleep(ctx, interval) {
				return
			}
			continue
		}
		// Taking over from another replica: it may not have seen yet that
		// its lock ended (its connection died). Until lead has waited for
		// it, this replica still reports Standby (a standby is ready).
		takeover := standby
		standby = false
		pause := l.lead(ctx, lease, interval, takeover, log, fn)
		if !bot.Sleep(ctx, pause) {
			return
		}
	}
}

// lead runs fn while lease holds, then releases it. It returns how long to
// wait before seeking leadership again. A takeover waits one and a half
// intervals before it runs fn, so that the replica that led before has
// checked its lease, found it lost and stopped; a replica that finds the
// lock free when it first asks runs fn at once.
func (l *Leader) lead(ctx context.Context, lease bot.Lease, interval time.Duration, takeover bool, log *slog.Logger, fn func(context.Context) error) time.Duration {
	runCtx, cancel := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for bot.Sleep(runCtx, interval) {
			cctx, stop := context.WithTimeout(runCtx, interval)
			err := lease.Check(cctx)
			stop()
			if err != nil && runCtx.Err() == nil {
				log.Warn("leader lock lost; stepping down", "err", err)
				cancel()
				return
			}
		}
	}()
	if takeover {
		// The lease's check comes at most an interval after the lock ended,
		// and the task then takes a moment to stop: half an interval more.
		wait := interval + interval/2
		log.Info("taking over; waiting for the replica that led to stop", "wait_ms", wait.Milliseconds())
		bot.Sleep(runCtx, wait)
	}
	pause := min(interval, time.Second)
	if runCtx.Err() == nil {
		log.Info("leading")
		l.held.Store(true) // before Standby ends: readiness sees one or the other
		l.standby.Store(false)
		err := fn(runCtx)
		l.held.Store(false)
		if err != nil && ctx.Err() == nil && runCtx.Err() == nil {
			log.Error("leader task stopped", "err", err)
			pause = 5 * interval // a task that fails (bad token) is not retried in a tight loop
		}
	}
	cancel()
	<-watched
	rctx, stop := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer stop()
	if err := lease.Release(rctx); err != nil {
		log.Debug("leader lock release failed (the lock ends with its connection)", "err", err)
	}
	return pause
}
