package main

import (
	"context"
	"time"
)

// upLook is how often channelsUpWithin looks at the start-up checks (in
// memory: the channels' state and whether migrations ran) during the first
// second, when start-up usually ends; upLookLater after that.
const (
	upLook      = 10 * time.Millisecond
	upLookLater = 200 * time.Millisecond
)

// channelsUpWithin is closed once the channels are connected and the
// migrations ran (startupChecks pass), or after limit, or when ctx ends. A
// channel that cannot connect delays nothing past limit.
func (d *daemon) channelsUpWithin(ctx context.Context, limit time.Duration) <-chan struct{} {
	done := make(chan struct{})
	checks := d.startupChecks()
	go func() {
		defer close(done)
		start := time.Now()
		deadline := time.NewTimer(limit)
		defer deadline.Stop()
		for !allPass(ctx, checks) {
			look := upLook
			if time.Since(start) > time.Second {
				look = upLookLater
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
