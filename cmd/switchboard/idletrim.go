package main

import (
	"context"
	"runtime/metrics"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
)

// Idle trimming (docs/benchmarks.md): while the daemon is idle it gives
// back, once a minute, the memory that the Go runtime and the kernel would
// otherwise keep for it. The runtime keeps an idle heap near its minimum
// goal (4 MiB × GOGC/100; see defaultGCPercent) and returns freed pages to
// the system only slowly; and every collection maps pages of the binary
// back in (stack maps, type data), 64 KiB around each page it reads.
// Between messages nothing needs either. Pages the daemon uses again come
// back on use: heap pages from the runtime, the binary's from the page
// cache (the cache keeps them; only this process's mapping of them goes).
const (
	trimEvery = time.Minute
	// trimIdleBelow is how much the daemon may allocate between two looks
	// and still count as idle: an idle daemon allocates about 0.2 MiB a
	// minute (heartbeats, polls); one that handles messages, far more, and
	// its heap is then reused rather than given back.
	trimIdleBelow = 2 << 20
)

// idleTrim decides, at each look, whether the daemon was idle since the
// previous one, and trims when it was.
type idleTrim struct {
	allocated func() uint64 // bytes allocated since the process started
	trim      func()
	last      uint64 // allocated at the previous look
}

// look trims when less than trimIdleBelow was allocated since the previous
// look, and reports whether it did. What the trim allocates itself does not
// count against the next look.
func (t *idleTrim) look() bool {
	now := t.allocated()
	idle := now-t.last < trimIdleBelow
	if idle {
		t.trim()
		now = t.allocated()
	}
	t.last = now
	return idle
}

// trimWhileIdle looks every `every` (trimEvery), on the shared beat, until
// ctx ends.
func (d *daemon) trimWhileIdle(ctx context.Context, every time.Duration) {
	t := &idleTrim{allocated: heapAllocated, trim: func() { d.giveBackMemory(ctx, "idle memory trimmed") }}
	t.last = t.allocated()
	for {
		wait := time.NewTimer(bot.UntilBeat(every))
		select {
		case <-ctx.Done():
			wait.Stop()
			return
		case <-wait.C:
		}
		t.look()
	}
}

// heapAllocated returns the bytes the process allocated on the heap so far
// (a running total, not what is live). Reading it does not stop the world.
func heapAllocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
