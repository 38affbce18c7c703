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
// replica may call it. The messages are queued before the approval is
// marked escalated, each under a key of its own, so a crash in between
// sends them on the next look, and replicas escalating at once queue each
// message once; the store's conditional update makes each approval
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
		for _, to := range bot.DecisionAddresses("", a.EscalateTo) {
			s.chat.AskDecision(ctx, s.o.Messages, bot.OutboxMessage{To: to, Text: escalationText(a), Buttons: buttonsFor(a),
				Key: "escalation:" + a.ID + ":" + to.String()}, Kind, a.ID, RoleEscalated)
		}
		after, marked, err := s.o.Store.MarkEscalated(ctx, a.ID)
		if err != nil {
			return n, fmt.Errorf("escalate approval %s: %w", a.ID, err)
		}
		if !marked {
			// Escalated or decided meanwhile, here or elsewhere. A decision
			// may have edited the messages before the escalation's was
			// queued: show that one the outcome too.
			if after.Status != StatusPending {
				s.finish(ctx, after)
			}
			continue
		}
		n++
		s.o.Logger.Info("approval escalated", "approval_id", a.ID, "to", a.EscalateTo)
	}
	return n, nil
}
