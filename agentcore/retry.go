package agentcore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// RetryOptions tunes WithRetry. Zero fields take their defaults.
type RetryOptions struct {
	// Attempts is the most calls made in total, the first included (default 4).
	Attempts int
	// Base is the backoff before the second attempt; it doubles each time
	// (default 500ms).
	Base time.Duration
	// Max caps every wait, the server's Retry-After hint included (default 20s).
	Max time.Duration
	// Sleep waits d or until ctx ends, returning ctx's error then (default: a
	// timer). Tests inject one that does not wait.
	Sleep func(ctx context.Context, d time.Duration) error
	// Logger receives a warning per retry (default: discarded).
	Logger *slog.Logger
}

func (o RetryOptions) withDefaults() RetryOptions {
	if o.Attempts <= 0 {
		o.Attempts = 4
	}
	if o.Base <= 0 {
		o.Base = 500 * time.Millisecond
	}
	if o.Max <= 0 {
		o.Max = 20 * time.Second
	}
	if o.Max < o.Base {
		o.Base = o.Max
	}
	if o.Sleep == nil {
		o.Sleep = sleepCtx
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// WithRetry wraps p so that calls failing with a retryable *ProviderError
// (see ProviderError.Retryable) are tried again, up to opts.Attempts calls in
// all, waiting an exponential backoff with jitter, or the server's RetryAfter
// hint when it gives one, never longer than opts.Max. It stops when ctx ends
// and returns the last error.
//
// A streamed call that fails midway may already have passed text to onText;
// the retried call streams its answer again from the start.
func WithRetry(p Provider, opts RetryOptions) Provider {
	return &retrying{p: p, opts: opts.withDefaults()}
}

type retrying struct {
	p    Provider
	opts RetryOptions
}

// Name returns the wrapped provider's name.
func (r *retrying) Name() string { return r.p.Name() }

// Chat calls the wrapped provider, retrying as WithRetry describes.
func (r *retrying) Chat(ctx context.Context, req Request, onText func(soFar string)) (Response, error) {
	var resp Response
	err := r.opts.do(ctx, r.p.Name(), func() error {
		var err error
		resp, err = r.p.Chat(ctx, req, onText)
		return err
	})
	return resp, err
}

// do runs call until it succeeds, fails with an error that is not a
// retryable *ProviderError, ctx ends or o.Attempts calls were made, waiting
// as WithRetry describes between calls, and returns the last error. what
// names the calls in the log.
func (o RetryOptions) do(ctx context.Context, what string, call func() error) error {
	for attempt := 1; ; attempt++ {
		err := call()
		if err == nil {
			return nil
		}
		var pe *ProviderError
		if !errors.As(err, &pe) || !pe.Retryable() || ctx.Err() != nil || attempt >= o.Attempts {
			return err
		}
		wait := o.delay(attempt, pe.RetryAfter)
		o.Logger.WarnContext(ctx, "llm call failed, retrying",
			"provider", what, "attempt", attempt, "status", pe.Status,
			"retry_in", wait, "err", err)
		if serr := o.Sleep(ctx, wait); serr != nil {
			return fmt.Errorf("%w (stopped waiting to retry: %w)", err, serr)
		}
	}
}

// delay is the wait after the attempt-th failed call: the server's hint when
// present, else Base·2^(attempt-1) with jitter in its upper half, capped by Max.
func (o RetryOptions) delay(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, o.Max)
	}
	d := o.Base
	for i := 1; i < attempt && d < o.Max; i++ {
		d *= 2
	}
	d = min(d, o.Max)
	half := d / 2
	return half + rand.N(half+1)
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// retryAfter reads a server's wait hint: retry-after-ms (milliseconds), else
// Retry-After (seconds or an HTTP date). It returns 0 when there is none.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < float64(24*time.Hour/time.Millisecond) {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 && s < float64(24*time.Hour/time.Second) {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
