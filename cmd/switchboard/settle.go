package main

import (
	"context"
	"runtime"
	"runtime/debug"
	"time"
)

// settleTimeout bounds how long releaseStartupMemory waits for the checks.
const settleTimeout = 30 * time.Second

// releaseStartupMemory returns the start-up's garbage (configuration,
// migrations, connection set-up) to the operating system once start-up is
// over (settled), or after settleTimeout. The Go runtime would otherwise
// keep those pages for minutes; an idle daemon then holds about 0.7 MiB
// less private memory (docs/benchmarks.md). Under load the heap grows as it
// needs to.
func (d *daemon) releaseStartupMemory(ctx context.Context) {
	deadline := time.NewTimer(settleTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
wait:
	for !d.settled(ctx) {
		select {
		case <-ctx.Done():
			return
		case <-deadline.C:
			d.log.Debug("start-up not over (a channel not ready?); releasing start-up memory anyway")
			break wait
		case <-tick.C:
		}
	}
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	d.log.Debug("start-up memory released", "heap_in_use_bytes", ms.HeapInuse, "heap_released_bytes", ms.HeapReleased)
}
