package channels_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
)

var errTooMany = errors.New("429 too many requests")

func limitedBy(d time.Duration) func(error) (time.Duration, bool) {
	return func(err error) (time.Duration, bool) { return d, errors.Is(err, errTooMany) }
}

func TestRateLimitsDo(t *testing.T) {
	ctx := context.Background()
	calls := 0
	failTimes := func(n int) func(context.Context) error {
		calls = 0
		return func(context.Context) error {
			calls++
			if calls <= n {
				return errTooMany
			}
			return nil
		}
	}
	l := channels.RateLimits{Platform: "test", MaxRetries: 2, MaxWait: time.Second, Limited: limitedBy(time.Millisecond)}

	if err := l.Do(ctx, failTimes(2)); err != nil || calls != 3 {
		t.Fatalf("two 429s within bounds: err %v after %d calls, want success after 3", err, calls)
	}
	err := l.Do(ctx, failTimes(5))
	var ra *channels.RetryAfterError
	if !errors.As(err, &ra) || ra.After != time.Millisecond || calls != 3 {
		t.Fatalf("past MaxRetries: %v after %d calls, want a RetryAfterError after 3", err, calls)
	}
	if plain := errors.New("boom"); !errors.Is(l.Do(ctx, func(context.Context) error { return plain }), plain) {
		t.Fatal("a non-429 error must come back as it is")
	}

	// A wait longer than MaxWait, or than ctx's deadline allows, is the
	// caller's: no waiting here, and the error is redacted.
	long := channels.RateLimits{Platform: "test", MaxRetries: 5, MaxWait: time.Second, Limited: limitedBy(time.Hour),
		Redact: func(error) error { return errors.New("redacted") }}
	if err := long.Do(ctx, failTimes(1)); !errors.As(err, &ra) || ra.After != time.Hour || calls != 1 || ra.Err.Error() != "redacted" {
		t.Fatalf("wait over MaxWait: %v after %d calls", err, calls)
	}
	dl, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	short := channels.RateLimits{Platform: "test", MaxRetries: 5, MaxWait: 2 * time.Hour, Limited: limitedBy(time.Hour)}
	if err := short.Do(dl, failTimes(1)); !errors.As(err, &ra) || calls != 1 {
		t.Fatalf("wait past the deadline: %v after %d calls", err, calls)
	}
	cancelled, stop := context.WithCancel(ctx)
	stop()
	slow := channels.RateLimits{Platform: "test", MaxRetries: 5, MaxWait: 2 * time.Hour, Limited: limitedBy(time.Hour)}
	if err := slow.Do(cancelled, failTimes(1)); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled while waiting: %v", err)
	}
}

// A call that says how long to wait itself (a file download's
// RetryAfterError) comes back as one RetryAfterError, not one inside
// another, redacted like any other.
func TestRateLimitsDoKeepsOneRetryAfterError(t *testing.T) {
	inner := errors.New("answered 429 Too Many Requests")
	l := channels.RateLimits{Platform: "test", MaxWait: time.Second,
		Limited: func(err error) (time.Duration, bool) {
			var ra *channels.RetryAfterError
			if errors.As(err, &ra) {
				return ra.After, true
			}
			return 0, false
		},
		Redact: func(err error) error { return fmt.Errorf("redacted: %w", err) }}
	err := l.Do(context.Background(), func(context.Context) error {
		return &channels.RetryAfterError{After: time.Hour, Err: inner}
	})
	var ra *channels.RetryAfterError
	if !errors.As(err, &ra) || ra.After != time.Hour || !errors.Is(err, inner) {
		t.Fatalf("Do = %v, want a RetryAfterError of an hour around the 429", err)
	}
	var nested *channels.RetryAfterError
	if errors.As(ra.Err, &nested) {
		t.Errorf("Do = %v: a RetryAfterError inside another", err)
	}
	if !strings.HasPrefix(ra.Err.Error(), "redacted: ") {
		t.Errorf("kept error %q was not redacted", ra.Err)
	}
}
