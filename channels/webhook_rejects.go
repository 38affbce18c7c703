package channels

import (
	"log/slog"
	"sync"
)

// WebhookRejects logs the requests a webhook refuses for their credentials
// (a bad signature or secret) without flooding the log: the first refusal
// of a streak is a warning that says what to check, the rest are debug
// lines, and the first accepted request after a streak says how many were
// refused. The zero value is not usable; set Log and Hint.
type WebhookRejects struct {
	Log *slog.Logger
	// Hint names what to check, e.g. "check slack.signing_secret".
	Hint string
	// Platform names the webhook in the messages, e.g. "slack".
	Platform string

	mu sync.Mutex
	n  int // length of the current streak
}

// Rejected records a refused request and why.
func (r *WebhookRejects) Rejected(reason string) {
	r.mu.Lock()
	r.n++
	first := r.n == 1
	r.mu.Unlock()
	if first {
		r.Log.Warn(r.Platform+" webhook request rejected (401); "+r.Hint+" if this repeats. "+
			"Further rejections are logged at debug level until a valid request arrives", "reason", reason)
		return
	}
	r.Log.Debug(r.Platform+" webhook request rejected", "reason", reason)
}

// Accepted ends a streak of refused requests.
func (r *WebhookRejects) Accepted() {
	r.mu.Lock()
	n := r.n
	r.n = 0
	r.mu.Unlock()
	if n > 0 {
		r.Log.Info(r.Platform+" webhook requests valid again", "rejected", n)
	}
}
