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

// releaseStartupMemory returns the start-up's garbage (configuration,
// migrations, connection set-up) to the operating system once start-up is
// over, or after settleTimeout. up is the background loops' wait
// (settledWithin, shorter); only when it ended before start-up did is
// there a second one. The Go runtime would otherwise keep those pages for
// minutes; an idle daemon then holds about 0.7 MiB less private memory
// (docs/benchmarks.md). Under load the heap grows as it needs to. The
// binary's pages that start-up mapped are let go too (giveBackMemory):
// those the daemon uses again come back on use.
func (d *daemon) releaseStartupMemory(ctx context.Context, up <-chan struct{}) {
	<-up
	if ctx.Err() == nil && !allPass(ctx, d.settleChecks()) {
		<-d.settledWithin(ctx, settleTimeout)
	}
	if ctx.Err() != nil {
		return
	}
	d.giveBackMemory(ctx, "start-up memory released")
}
