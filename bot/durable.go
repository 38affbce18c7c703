package bot

import (
	"context"
	"time"
)

const (
	// durableTimeout bounds the handling of one inbound event, retries of
	// its durable save included.
	durableTimeout = 30 * time.Second
	// durableGrace is how long an event in flight may still be handled
	// after the caller's context ended (shutdown, lost leadership): enough
	// to finish a save, short enough to keep shutdown quick.
	durableGrace = 5 * time.Second
)

// durable returns a context for handling one inbound event: the caller's
// values without its cancellation, ending after durableTimeout, or
// durableGrace after the caller's context ended, whichever comes first. A
// save that began is thus not cut off by a shutdown or a leadership change;
// an event that still could not be stored is reported to the channel,
// which leaves it to be delivered again.
func durable(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(parent), durableTimeout)
	stop := context.AfterFunc(parent, func() { time.AfterFunc(durableGrace, cancel) })
	return ctx, func() {
		stop()
		cancel()
	}
}
