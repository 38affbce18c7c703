package askuser

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
)

// lookEvery is the longest ExpireDue goes without looking at the store
// (bot.ExpiryWatch): a question whose replica stopped expires at most this
// late.
const lookEvery = 30 * time.Second

// ExpireDue expires the pending questions whose time is up, edits their
// messages and resumes their runs (which tell the model nobody answered).
// Every replica may call it; each question expires once.
func (s *Service) ExpireDue(ctx context.Context) (int, error) {
	now := time.Now()
	if !s.expiries.Begin(now) {
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
	s.expiries.Looked(now, next)
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
