package bot

import (
	"context"
	"math/rand/v2"
	"time"
)

// Background work that repeats while the daemon is idle (heartbeats,
// recovery passes, safety polls) wakes at aligned moments: the process's
// phase plus a whole multiple of its interval. Intervals of whole seconds
// then wake together, and an idle daemon wakes once a second for all of it
// instead of once per loop at scattered moments: each wake-up costs the Go
// runtime a round of waking threads that is larger than the work itself.
// Work that is due at a given time (a job's slot, a retry) is not aligned.

// alignPhase offsets this process's aligned moments, so that replicas do
// not all wake at the same instant. Set once, never changed.
var alignPhase = time.Duration(rand.Int64N(int64(time.Second)))

// UntilAligned returns how long from now until the next aligned moment of
// interval (at most interval; 0 for an interval of 0 or less).
func UntilAligned(interval time.Duration) time.Duration {
	return untilAligned(time.Now(), interval)
}

// untilAligned is UntilAligned at now.
func untilAligned(now time.Time, interval time.Duration) time.Duration {
	if interval <= 0 {
		return 0
	}
	t := now.UnixNano() - int64(alignPhase)
	next := (t/int64(interval) + 1) * int64(interval)
	return time.Duration(next - t)
}

// Sleep waits d; it reports false, sooner, when ctx ends first. The
// pipeline's background loops and those of features wait with it.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
