package channels

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/sethvargo/go-retry"
)

// maxHandleRetryWait caps the wait between two calls of a failing handler:
// once storage is back, a waiting event is stored within a few seconds.
const maxHandleRetryWait = 5 * time.Second

// HandleRetry calls a Handler again, with capped exponential backoff and
// jitter, until it stores the event or the channel stops. Adapters use it
// where an event must not be given up while storage is down: Telegram (the
// update stays unconfirmed meanwhile) and Discord (the gateway cannot
// redeliver). Failures are logged once per streak: a warning when an event
// starts failing while none other does, debug lines while any still fails,
// and an info line when the last one is stored.
type HandleRetry struct {
	platform string
	log      *slog.Logger
	min, max time.Duration

	mu       sync.Mutex
	failing  int // events being retried now
	attempts int // failed calls in the current streak
}

// NewHandleRetry returns a HandleRetry that waits min, 2·min … up to max
// (at most 5 s) between calls of a failing handler.
func NewHandleRetry(platform string, log *slog.Logger, lo, hi time.Duration) *HandleRetry {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	lo = max(lo, time.Millisecond)
	return &HandleRetry{platform: platform, log: log, min: lo, max: max(lo, min(hi, maxHandleRetryWait))}
}

// Do calls h with in until h returns nil, and returns nil then. When ctx
// ends first it returns an error wrapping h's last error: the event was not
// stored. A panic in h propagates to the caller.
func (r *HandleRetry) Do(ctx context.Context, h Handler, in Inbound) error {
	b := retry.WithCappedDuration(r.max, retry.WithJitterPercent(20, retry.NewExponential(r.min)))
	var (
		last            error
		failing, stored bool
	)
	defer func() {
		if failing {
			r.end(in, stored)
		}
	}()
	err := retry.Do(ctx, b, func(ctx context.Context) error {
		last = h(ctx, in)
		if last == nil {
			stored = true
			return nil
		}
		r.failed(in, last, !failing)
		failing = true
		return retry.RetryableError(last)
	})
	switch {
	case stored:
		return nil
	case last != nil:
		return fmt.Errorf("%s event %s not stored: %w", r.platform, in.ExternalID, last)
	default:
		return fmt.Errorf("%s event %s not handled: %w", r.platform, in.ExternalID, err)
	}
}

// failed records a failed call; first says it is the event's first.
func (r *HandleRetry) failed(in Inbound, err error, first bool) {
	r.mu.Lock()
	if first {
		r.failing++
	}
	r.attempts++
	warn := first && r.failing == 1 && r.attempts == 1
	r.mu.Unlock()
	if warn {
		r.log.Warn(r.platform+" event not stored (storage unavailable?); retrying until it is",
			"external_id", in.ExternalID, "error", err)
		return
	}
	r.log.Debug(r.platform+" event still not stored", "external_id", in.ExternalID, "error", err)
}

// end records that a failing event was stored or given up (the channel
// stopped), ending the streak when no other event is failing.
func (r *HandleRetry) end(in Inbound, stored bool) {
	r.mu.Lock()
	r.failing--
	n := r.attempts
	over := r.failing == 0
	if over {
		r.attempts = 0
	}
	r.mu.Unlock()
	switch {
	case !stored:
		r.log.Debug(r.platform+" stopped retrying an event that was not stored", "external_id", in.ExternalID)
	case over:
		r.log.Info(r.platform+" events stored again", "failed_attempts", n)
	}
}
