package channels

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// RateLimits bounds how long an adapter waits out a platform's 429
// answers within one call before handing the wait to its caller.
type RateLimits struct {
	// Platform names the platform in logs and errors.
	Platform string
	// MaxRetries is how many 429 answers are waited out.
	MaxRetries int
	// MaxWait caps the total time waited.
	MaxWait time.Duration
	// Limited reports whether err is a 429 and how long the platform
	// asked to wait.
	Limited func(err error) (time.Duration, bool)
	// Redact, when set, cleans the error kept in a RetryAfterError.
	Redact func(error) error
	// Logger receives a line per wait; nil discards them.
	Logger *slog.Logger
	// Cooldowns, when set, is shared by every call to the platform: a call
	// to Chat first waits out the chat's latest 429, whichever call got it,
	// and a 429 answered here starts the chat's next cooldown.
	Cooldowns *Cooldowns
	// Chat is the chat the call goes to, as the platform limits it ("":
	// none in particular).
	Chat string
}

// Do calls fn and, while it fails with a 429, waits as the platform asked
// and calls it again, as long as the waits stay within MaxRetries, MaxWait
// and ctx's deadline. Past that it returns a *RetryAfterError, so the
// caller (the dispatcher) retries later without holding anything. A chat
// still cooling down from an earlier 429 (Cooldowns) is waited out the
// same way before fn is called at all.
func (l RateLimits) Do(ctx context.Context, fn func(context.Context) error) error {
	var waited time.Duration
	for attempt := 0; ; attempt++ {
		var err error
		after := l.Cooldowns.Left(l.Chat)
		limited := after > 0
		if limited {
			err = fmt.Errorf("%s asked us to wait before sending to %s again", l.Platform, l.Chat)
		} else {
			err = fn(ctx)
			if after, limited = l.Limited(err); !limited {
				return err
			}
			l.Cooldowns.Limit(l.Chat, after)
		}
		deadline, hasDeadline := ctx.Deadline()
		if attempt >= l.MaxRetries || waited+after > l.MaxWait || (hasDeadline && time.Until(deadline) < after) {
			if ra, ok := err.(*RetryAfterError); ok {
				err = ra.Err // fn said to wait already (Download): one RetryAfterError, not two
			}
			if l.Redact != nil {
				err = l.Redact(err)
			}
			return &RetryAfterError{After: after, Err: err}
		}
		if l.Logger != nil {
			l.Logger.Info(l.Platform+" rate limit, waiting", "retry_after", after, "attempt", attempt+1)
		}
		timer := time.NewTimer(after)
		select {
		case <-ctx.Done():
			timer.Stop()
			return fmt.Errorf("waiting out a %s rate limit: %w", l.Platform, ctx.Err())
		case <-timer.C:
		}
		waited += after
	}
}
