package main

import (
	"context"
	"time"
)

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
