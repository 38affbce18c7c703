package bot

import (
	"sync"
	"time"
)

// ExpiryWatch tells a feature's expiry pass (approvals, questions) when a
// look at the store can find a request whose time is up, so that an idle
// replica does not query every second for requests that expire in
// minutes. Between looks it knows when the next request it saw, or made
// itself, expires; requests other replicas make meanwhile are expired by
// those replicas, on time. The regular look, at least every Every, is for
// the ones whose replica stopped: they expire at most that late. The zero
// value (with Every set) is due at once.
type ExpiryWatch struct {
	// Every is the longest the watch goes without a look.
	Every time.Duration

	mu    sync.Mutex
	at    time.Time // look at or after this; zero: at once
	noted time.Time // the earliest expiry noted since the current look began; zero: none
}

// Begin reports whether a look is due at now; when it is, the caller looks
// and then calls Looked (or, when the look failed, nothing: the next call
// is due too).
func (w *ExpiryWatch) Begin(now time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if now.Before(w.at) {
		return false
	}
	w.noted = time.Time{}
	return true
}

// Note records a request of this process that expires at t, so the look
// for it is not later than t, even when a look under way did not see it.
func (w *ExpiryWatch) Note(t time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.at.IsZero() && t.Before(w.at) {
		w.at = t
	}
	if w.noted.IsZero() || t.Before(w.noted) {
		w.noted = t
	}
}

// Looked records a look begun at now that found the next expiry at next
// (zero: none pending): the next look is then, or after Every, or at an
// expiry noted meanwhile, whichever comes first.
func (w *ExpiryWatch) Looked(now, next time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	at := now.Add(w.Every)
	for _, t := range []time.Time{next, w.noted} {
		if !t.IsZero() && t.Before(at) {
			at = t
		}
	}
	w.at = at
}
