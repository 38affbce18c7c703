package bot

import "time"

// maxRetryDelay caps RetryDelay.
const maxRetryDelay = 5 * time.Minute

// RetryDelay is how long to wait after a failed attempt before the next one
// of a send or a scheduled run that is retried later (the time is stored,
// so the wait survives a restart): base after the first attempt, doubling
// with each further one, at most 5 minutes.
func RetryDelay(base time.Duration, attempts int) time.Duration {
	d := base
	for i := 1; i < attempts && d < maxRetryDelay; i++ {
		d *= 2
	}
	return min(d, maxRetryDelay)
}
