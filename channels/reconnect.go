package channels

import (
	"context"
	"math/rand/v2"
	"time"
)

// Reconnect retries an adapter's connection step (a handshake, a gateway
// session, a socket) with capped exponential backoff and jitter, keeping
// Health up to date, until it succeeds, fails for good, or ctx ends.
type Reconnect struct {
	Health *Health
	// Op names the step in Health's logs ("connect", "gateway").
	Op string
	// Min and Max bound the wait between attempts.
	Min, Max time.Duration
	// Fatal returns the error to give up with when retrying cannot fix err
	// (a rejected token); nil means retry.
	Fatal func(err error) error
	// Fresh reports errors that end a step that worked until then (a
	// dropped session): the backoff starts over and nothing is logged.
	Fresh func(err error) bool
}

// Run calls fn until it returns nil (Run returns nil), returns an error
// Fatal accepts (Run records and returns Fatal's error), or ctx ends (Run
// returns ctx's error).
func (r Reconnect) Run(ctx context.Context, fn func(context.Context) error) error {
	wait := r.Min
	for {
		err := fn(ctx)
		fresh := err != nil && r.Fresh != nil && r.Fresh(err)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err == nil:
			return nil
		case fresh:
			wait = r.Min
		default:
			if r.Fatal != nil {
				if fatal := r.Fatal(err); fatal != nil {
					r.Health.Set(fatal)
					return fatal
				}
			}
			r.Health.Failed(r.Op, err, wait)
		}
		if err := sleepJittered(ctx, wait); err != nil {
			return err
		}
		if !fresh {
			wait = min(2*wait, r.Max)
		}
	}
}

// sleepJittered waits d plus up to 20% (so replicas do not retry in step),
// or until ctx ends.
func sleepJittered(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d + time.Duration(rand.Int64N(int64(d)/5+1)))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}
