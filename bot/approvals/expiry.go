package approvals

import (
	"context"
	"sync"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
)

// approvalLookEvery is the longest ExpireDue goes without looking at the
// store. Between looks it knows when the next approval it saw, or asked
// for itself, expires, and does not ask before then; approvals that other
// replicas ask for meanwhile are expired by those replicas, on time. The
// regular look is for the ones whose replica stopped: they expire at most
// this late.
const approvalLookEvery = 10 * time.Second

// expiryWatch tells ExpireDue when a look at the store can find an approval
// whose time is up, so that an idle replica does not query every second
// for approvals that expire in minutes.
type expiryWatch struct {
	mu    sync.Mutex
	at    time.Time // look at or after this; zero: at once
	noted time.Time // the earliest expiry noted since the current look began; zero: none
}

// begin reports whether a look is due at now; when it is, the caller looks
// and then calls looked (or, when the look failed, nothing: the next call
// is due too).
func (w *expiryWatch) begin(now time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if now.Before(w.at) {
		return false
	}
	w.noted = time.Time{}
	return true
}

// note records an approval of this process that expires at t, so the look
// for it is not later than t, even when a look under way did not see it.
func (w *expiryWatch) note(t time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.at.IsZero() && t.Before(w.at) {
		w.at = t
	}
	if w.noted.IsZero() || t.Before(w.noted) {
		w.noted = t
	}
}

// looked records a look begun at now that found the next expiry at next
// (zero: none pending): the next look is then, or at approvalLookEvery,
// or at an expiry noted meanwhile, whichever comes first.
func (w *expiryWatch) looked(now, next time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	at := now.Add(approvalLookEvery)
	for _, t := range []time.Time{next, w.noted} {
		if !t.IsZero() && t.Before(at) {
			at = t
		}
	}
	w.at = at
}

// RunExpiry expires the approvals whose time is up (ExpireDue) and
// escalates those due (EscalateDue) now and on every beat of interval
// until ctx ends, resuming the expired ones' parked runs. Every replica
// runs it; each approval expires once and escalates once.
func (s *Service) RunExpiry(ctx context.Context, interval time.Duration) {
	bot.RepeatPaced(ctx, s.o.Logger, "approval expiry", func(ctx context.Context) error {
		_, err := s.ExpireDue(ctx)
		if _, escErr := s.EscalateDue(ctx); err == nil {
			err = escErr
		}
		return err
	}, func() time.Duration { return interval }, nil)
}
