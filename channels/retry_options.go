package channels

import "time"

// Retry is how an adapter retries its platform. Adapters embed it in their
// Options; WithDefaults fills the fields left zero.
type Retry struct {
	// RetryMin and RetryMax bound the backoff between connection attempts
	// while the platform is unreachable, and between attempts to hand an
	// event to the handler.
	RetryMin, RetryMax time.Duration
	// MaxRetries and MaxRetryWait bound how often and how long one call
	// waits out 429 Too Many Requests before returning a *RetryAfterError.
	MaxRetries   int
	MaxRetryWait time.Duration
}

// WithDefaults returns r with its zero fields set: RetryMin 1s, RetryMax
// maxBackoff (and never below RetryMin), MaxRetries 3, MaxRetryWait 60s.
func (r Retry) WithDefaults(maxBackoff time.Duration) Retry {
	if r.RetryMin <= 0 {
		r.RetryMin = time.Second
	}
	if r.RetryMax <= 0 {
		r.RetryMax = maxBackoff
	}
	r.RetryMax = max(r.RetryMax, r.RetryMin)
	if r.MaxRetries <= 0 {
		r.MaxRetries = 3
	}
	if r.MaxRetryWait <= 0 {
		r.MaxRetryWait = 60 * time.Second
	}
	return r
}
