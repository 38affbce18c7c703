package approvals

import (
	"context"
	"fmt"

	"github.com/switchboard-chat/switchboard/bot"
)

// RoleEscalated marks the messages sent to escalate_to in decision
// messages, so they are edited with the others.
const RoleEscalated = "escalated"

// EscalateDue sends every pending approval whose escalate_after has passed
// to its escalate_to people, who may vote on it from then on. Every
// replica may call it; the store's conditional update makes each approval
// escalate once. It asks the store only when some rule escalates.
func (s *Service) EscalateDue(ctx context.Context) (int, error) {
	if !s.escalates {
		return 0, nil
	}
	due, err := s.o.Store.DueEscalations(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, a := range due {
		after, marked, err := s.o.Store.MarkEscalated(ctx, a.ID)
		if err != nil {
			return n, fmt.Errorf("escalate approval %s: %w", a.ID, err)
		}
		if !marked {
			continue // escalated or decided meanwhile, here or elsewhere
		}
		n++
		s.o.Logger.Info("approval escalated", "approval_id", a.ID, "to", after.EscalateTo)
		for _, to := range bot.DecisionAddresses("", after.EscalateTo) {
			s.chat.AskDecision(ctx, s.o.Messages, bot.OutboxMessage{To: to, Text: escalationText(after), Buttons: buttonsFor(after)},
				Kind, after.ID, RoleEscalated)
		}
	}
	return n, nil
}
