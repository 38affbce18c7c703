package bot

import (
	"context"

	"github.com/switchboard-chat/switchboard/channels"
)

// The Router's part in a feature's conversation with people: what the
// approvals and access features post, edit and answer goes the way every
// reply goes. Each feature declares the part it uses as an interface of
// its own.

// Send queues m for delivery through the outbox.
func (r *Router) Send(ctx context.Context, m OutboxMessage) { r.send(ctx, m) }

// Notify queues a short system message to the chat in, as a reply to it.
func (r *Router) Notify(ctx context.Context, in channels.Inbound, text string) {
	r.notify(ctx, in, text)
}

// NoticeOnce notifies in's chat with text unless the notice under key was
// given in the last half day, so a stranger cannot make the bot spam a
// group.
func (r *Router) NoticeOnce(ctx context.Context, in channels.Inbound, key, text string) {
	if r.shouldNotice(ctx, key, DedupeTTL/4) {
		r.notify(ctx, in, text)
	}
}

// AnswerPress acknowledges a button press, showing text to the presser.
func (r *Router) AnswerPress(ctx context.Context, in channels.Inbound, text string) {
	r.out.answer(ctx, in, text)
}

// AskDecision queues m, a message asking for a decision on subject (of
// kind), and records it in store with role before this replica can
// deliver it, so that a press answering it always finds the message to
// edit.
func (r *Router) AskDecision(ctx context.Context, store DecisionMessages, m OutboxMessage, kind, subject, role string) {
	r.out.askDecision(ctx, store, m, kind, subject, role)
}

// EditDecisions edits every message store recorded about the decided
// subject (of kind) to text, without buttons; one not delivered yet is
// edited once it is.
func (r *Router) EditDecisions(ctx context.Context, store DecisionMessages, kind, subject string, text func(DecisionMessage) string) {
	r.out.editDecisions(ctx, store, kind, subject, func(m DecisionMessage) (string, [][]channels.Button) { return text(m), nil })
}

// ShowProgress edits every message store recorded about the still
// undecided subject (of kind) to what render returns, buttons included,
// so that a vote that does not decide shows on every screen and the
// others can still press.
func (r *Router) ShowProgress(ctx context.Context, store DecisionMessages, kind, subject string, render func(DecisionMessage) (string, [][]channels.Button)) {
	r.out.editDecisions(ctx, store, kind, subject, render)
}

// SessionKey is the session the chat at addr talks in (its agent's, after
// bindings and handoffs).
func (r *Router) SessionKey(ctx context.Context, addr channels.Address) string {
	return r.sessionKey(ctx, addr)
}
