package askuser

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
)

// lookEvery is the longest ExpireDue goes without looking at the store.
// Between looks it knows when the next question it saw, or asked itself,
// expires; the regular look finds those whose replica stopped, at most
// this late.
const lookEvery = 30 * time.Second

// expiryWatch tells ExpireDue when a look at the store can find a question
// whose time is up, so an idle replica does not query every second for
// questions that expire in an hour.
type expiryWatch struct {
	mu sync.Mutex
	at time.Time // look at or after this; zero: at once
}

// due reports whether a look is due at now.
func (w *expiryWatch) due(now time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return !now.Before(w.at)
}

// note records a question that expires at t, so the next look is no
// later than t.
func (w *expiryWatch) note(t time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t.Before(w.at) {
		w.at = t
	}
}

// looked records a look at now that found the next expiry at next (zero:
// none pending).
func (w *expiryWatch) looked(now, next time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	at := now.Add(lookEvery)
	if !next.IsZero() && next.Before(at) {
		at = next
	}
	w.at = at
}

// ExpireDue expires the pending questions whose time is up, edits their
// messages and resumes their runs (which tell the model nobody answered).
// Every replica may call it; each question expires once.
func (s *Service) ExpireDue(ctx context.Context) (int, error) {
	now := time.Now()
	if !s.expiries.due(now) {
		return 0, nil
	}
	due, next, err := s.o.Store.DueQuestions(ctx)
	if err != nil {
		return 0, fmt.Errorf("list due questions: %w", err)
	}
	n := 0
	for _, q := range due {
		_, changed, err := s.expire(ctx, q, true)
		if err != nil {
			return n, err
		}
		if changed {
			n++
		}
	}
	s.expiries.looked(now, next)
	return n, nil
}

// RunExpiry expires the questions whose time is up now and on every beat
// of interval until ctx ends. Every replica runs it.
func (s *Service) RunExpiry(ctx context.Context, interval time.Duration) {
	bot.RepeatPaced(ctx, s.o.Logger, "question expiry", func(ctx context.Context) error {
		_, err := s.ExpireDue(ctx)
		return err
	}, func() time.Duration { return interval }, nil)
}
