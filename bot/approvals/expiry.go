package approvals

import (
	"context"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
)

// approvalLookEvery is the longest ExpireDue goes without looking at the
// store (bot.ExpiryWatch): an approval whose replica stopped expires at
// most this late.
const approvalLookEvery = 10 * time.Second

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
