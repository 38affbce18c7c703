package main

import (
	"context"
	"time"
)

// settleTimeout bounds how long releaseStartupMemory waits for the checks.
const settleTimeout = 30 * time.Second

// settleLook is how often settledWithin looks at the checks (in memory:
// the channels' state and whether migrations ran) during the first second,
// when start-up usually ends; settleLookLater after that.
const (
	settleLook      = 10 * time.Millisecond
	settleLookLater = 200 * time.Millisecond
)

// settledWithin is closed once start-up is over (settleChecks pass), or
// after limit, or when ctx ends. A channel that cannot connect delays
// nothing past limit.
func (d *daemon) settledWithin(ctx context.Context, limit time.Duration) <-chan struct{} {
	done := make(chan struct{})
	checks := d.settleChecks()
	go func() {
		defer close(done)
		start := time.Now()
		deadline := time.NewTimer(limit)
		defer deadline.Stop()
		for !allPass(ctx, checks) {
			look := settleLook
			if time.Since(start) > time.Second {
				look = settleLookLater
			}
			tick := time.NewTimer(look)
			select {
			case <-ctx.Done():
				tick.Stop()
				return
			case <-deadline.C:
				tick.Stop()
				d.log.Debug("start-up not over (a channel not ready?); going on", "after", limit)
				return
			case <-tick.C:
			}
		}
	}()
	return done
}

// startupQuiet is how long releaseStartupMemory waits once start-up is
// over before it gives memory back, and the daemon must have been quiet
// meanwhile (allocated less than trimIdleBelow, as the idle trim counts).
const startupQuiet = 2 * time.Second

// releaseStartupMemory returns the start-up's garbage (configuration,
// migrations, connection set-up) to the operating system once start-up is
// over (or after settleTimeout) and the daemon has then been quiet for
// quiet. up is the background loops' wait (settledWithin, shorter); only
// when it ended before start-up did is there a second one. The Go runtime
// would otherwise keep those pages for minutes; an idle daemon then holds
// about 0.7 MiB less private memory (docs/benchmarks.md). The binary's pages
// that start-up mapped are let go too (giveBackMemory): those the daemon
// uses again come back on use.
//
// Why wait: the first seconds after ready are when a restarted daemon
// answers what queued up while it was down, with the code and heap that
// start-up just used; a forced collection and unmapped code then would
// only slow those first replies. A daemon that is busy when the wait ends
// keeps the memory (its heap is reused) and the idle trim gives it back
// once it is quiet. The twenty-seventh round of docs/benchmarks.md also
// found that releasing at once landed in the CPU a start measured "to
// ready" whenever the ready check saw ready a few ms late.
func (d *daemon) releaseStartupMemory(ctx context.Context, up <-chan struct{}, quiet time.Duration) {
	<-up
	if ctx.Err() == nil && !allPass(ctx, d.settleChecks()) {
		<-d.settledWithin(ctx, settleTimeout)
	}
	t := &idleTrim{allocated: heapAllocated, trim: func() { d.giveBackMemory(ctx, "start-up memory released") }}
	if !trimAfterQuiet(ctx, quiet, t) && ctx.Err() == nil {
		d.log.Debug("start-up memory kept: busy after start-up; the idle trim gives it back", "quiet", quiet)
	}
}

// trimAfterQuiet waits quiet and then lets t look (it trims when less than
// trimIdleBelow was allocated meanwhile). It reports whether t trimmed; not
// when ctx ended first.
func trimAfterQuiet(ctx context.Context, quiet time.Duration, t *idleTrim) bool {
	t.last = t.allocated()
	wait := time.NewTimer(quiet)
	defer wait.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-wait.C:
	}
	return t.look()
}
