package budgets

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
)

// ButtonKind marks the override buttons: their data is "bu:<id>:<choice>".
const ButtonKind = "bu"

// Button choices: Allow once more, Keep limit.
const (
	choiceAllow = "a"
	choiceKeep  = "k"
)

// ask records that b is used up by subject this period and, the first
// time (on any replica), asks the admins. It returns the override's
// status; pending when it could not be recorded (the refusal stands).
func (g *Guard) ask(ctx context.Context, b Budget, subject string, start, end time.Time, used int64, c agentcore.MeteredCall) string {
	ctx = context.WithoutCancel(ctx)
	o, created, err := g.o.Store.OpenOverride(ctx, Override{
		ID: bot.NewID(), Budget: b.ID(), Subject: subject, PeriodStart: start, PeriodEnd: end, Used: used, Limit: b.Limit,
		Chat: channels.Address{Platform: c.Call.Channel, ChatID: c.Call.ChatID, ThreadID: c.Call.ThreadID},
	})
	if err != nil {
		g.o.Logger.Error("record used-up budget", "budget", b.ID(), "subject", subject, "err", err)
		return StatusPending
	}
	if !created {
		return o.Status
	}
	to := bot.DecisionAddresses(g.o.AdminChat, g.o.Admins)
	if len(to) == 0 || g.chat == nil {
		g.o.Logger.Warn("budget used up and no admin to ask", "budget", b.ID(), "subject", subject)
		return o.Status
	}
	buttons := [][]channels.Button{{
		{Label: "Allow once more", Data: ButtonKind + ":" + o.ID + ":" + choiceAllow},
		{Label: "Keep limit", Data: ButtonKind + ":" + o.ID + ":" + choiceKeep},
	}}
	text := askText(b, subject, used, end)
	for _, addr := range to {
		g.chat.AskDecision(ctx, g.o.Messages, bot.OutboxMessage{To: addr, Text: text, Buttons: buttons}, Kind, o.ID, "approver")
	}
	return o.Status
}

// Decide handles a press on an override button: only admins decide, the
// first decision wins, every press is answered.
func (g *Guard) Decide(ctx context.Context, in channels.Inbound, id, choice string) {
	presser := in.Identity()
	if !slices.Contains(g.o.Admins, presser) {
		g.o.Logger.Warn("budget override press by a non-admin", "override_id", id, "presser", presser)
		g.chat.AnswerPress(ctx, in, "You may not decide this: only admins raise budgets.")
		return
	}
	status, ok := map[string]string{choiceAllow: StatusAllowed, choiceKeep: StatusKept}[choice]
	if !ok {
		g.chat.AnswerPress(ctx, in, "This button is no longer active.")
		return
	}
	o, changed, err := g.DecideAs(ctx, id, status, presser)
	switch {
	case errors.Is(err, bot.ErrNotFound):
		g.chat.AnswerPress(ctx, in, "This request no longer exists.")
	case err != nil:
		g.chat.AnswerPress(ctx, in, "Could not record your decision (storage unavailable); press again in a moment.")
	case !changed:
		g.chat.AnswerPress(ctx, in, "Already decided: "+decisionText(o)+".")
	default:
		g.chat.AnswerPress(ctx, in, "Done: "+decisionText(o)+".")
	}
}

// DecideAs decides override id (StatusAllowed or StatusKept) on behalf of
// by, edits the admins' messages to say who decided what and, when
// allowed, tells the chat the budget was refused in. The first decision
// wins: changed is false when it was decided before, and nothing changes.
func (g *Guard) DecideAs(ctx context.Context, id, status, by string) (Override, bool, error) {
	ctx = context.WithoutCancel(ctx)
	o, changed, err := g.o.Store.DecideOverride(ctx, id, status, by)
	if err != nil {
		if !errors.Is(err, bot.ErrNotFound) {
			g.o.Logger.Error("decide budget override", "override_id", id, "err", err)
		}
		return o, false, err
	}
	if !changed {
		return o, false, nil
	}
	g.o.Logger.Info("budget override decided", "override_id", id, "budget", o.Budget, "subject", o.Subject, "status", o.Status, "by", by)
	b, known := g.byID(o.Budget)
	if g.o.Messages != nil && g.chat != nil {
		g.chat.EditDecisions(ctx, g.o.Messages, Kind, o.ID, func(bot.DecisionMessage) string { return decidedText(o, b, known) })
	}
	if o.Status == StatusAllowed && o.Chat.Platform != "" && g.chat != nil && known {
		g.chat.Send(ctx, bot.OutboxMessage{To: o.Chat, Text: allowedNotice(o, b)})
	}
	return o, true, nil
}
