package bot

import (
	"context"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
)

// How long editDecisions waits for a message that was not yet delivered
// when its subject was decided, and how often it looks.
const (
	undeliveredEditWait = 30 * time.Second
	undeliveredEditPoll = 100 * time.Millisecond
)

// askDecision queues m, a message asking for a decision on subject, and
// records it in store (with role) before this replica can deliver it, so
// that a press answering it always finds the message to edit.
func (p *outboxWriter) askDecision(ctx context.Context, store DecisionMessages, m OutboxMessage, kind, subject, role string) {
	p.sendStored(ctx, m, func(outboxID int64) {
		if store == nil {
			return
		}
		if err := store.AddDecisionMessage(ctx, kind, subject, outboxID, role); err != nil {
			p.log.Warn("remember decision message", "kind", kind, "id", subject, "err", err)
		}
	})
}

// editDecisions edits every message about a subject (an approval, an
// access request) to what render returns: the outcome without buttons once
// decided, or the votes so far with the buttons kept while it is pending.
// A message the outbox has not delivered yet has no platform id to edit (a
// press can come in between the send and its being recorded): it is edited
// as soon as its delivery is recorded, for up to 30 s, in the background.
func (p *outboxWriter) editDecisions(ctx context.Context, store DecisionMessages, kind, subject string, render func(DecisionMessage) (string, [][]channels.Button)) {
	if store == nil {
		return
	}
	msgs, err := store.DecisionMessagesOf(ctx, kind, subject)
	if err != nil {
		p.log.Warn("load decision messages", "kind", kind, "id", subject, "err", err)
		return
	}
	waiting := map[int64]bool{}
	for _, m := range msgs {
		if m.PlatformMessageID == "" {
			waiting[m.OutboxID] = true
			continue
		}
		text, buttons := render(m)
		p.editWith(ctx, m.To, m.PlatformMessageID, text, buttons)
	}
	if len(waiting) == 0 {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undeliveredEditWait)
		defer cancel()
		tick := time.NewTicker(undeliveredEditPoll)
		defer tick.Stop()
		for len(waiting) > 0 {
			select {
			case <-ctx.Done():
				p.log.Warn("a decided message was not delivered in time to show the outcome", "kind", kind, "id", subject)
				return
			case <-tick.C:
			}
			msgs, err := store.DecisionMessagesOf(ctx, kind, subject)
			if err != nil {
				continue
			}
			for _, m := range msgs {
				if waiting[m.OutboxID] && m.PlatformMessageID != "" {
					delete(waiting, m.OutboxID)
					text, buttons := render(m)
					p.editWith(ctx, m.To, m.PlatformMessageID, text, buttons)
				}
			}
		}
	}()
}

// DecisionAddresses is where requests for a decision go: the configured
// chat (platform:chat_id), else each decider's direct messages.
func DecisionAddresses(chat string, deciders []string) []channels.Address {
	if chat != "" {
		if to, err := channels.ParseAddress(chat); err == nil {
			return []channels.Address{to}
		}
	}
	var out []channels.Address
	for _, id := range deciders {
		if to, ok := directAddress(id); ok {
			out = append(out, to)
		}
	}
	return out
}
