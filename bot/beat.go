package bot

import (
	"math/rand/v2"
	"time"
)

// Background work that repeats while the daemon is idle (heartbeats,
// recovery passes, safety polls) waits for a shared beat: the
// process's phase plus a whole multiple of its interval. Intervals of whole
// seconds then share their beats, and an idle daemon wakes once a second for
// all of it instead of once per loop at scattered moments: every wake costs
// the Go runtime a round of waking threads and spinning that is larger than
// the work itself. Work that is due at a given time (a job's slot, a
// retry) does not wait for a beat.

// beatPhase offsets this process's beats, so that replicas do not all wake
// at the same instant. Set once, never changed.
var beatPhase = time.Duration(rand.Int64N(int64(time.Second)))

// UntilBeat returns how long from now until the next beat of interval (at
// most interval; 0 for an interval of 0 or less).
func UntilBeat(interval time.Duration) time.Duration {
	return untilBeat(time.Now(), interval)
}

// untilBeat is UntilBeat at now.
func untilBeat(now time.Time, interval time.Duration) time.Duration {
	if interval <= 0 {
		return 0
	}
	t := now.UnixNano() - int64(beatPhase)
	next := (t/int64(interval) + 1) * int64(interval)
	return time.Duration(next - t)
}
