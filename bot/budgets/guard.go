package budgets

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
)

// recordTimeout bounds Record's Redis update, which runs after the run's
// context may have ended.
const recordTimeout = 5 * time.Second

// Pipeline is what the Guard needs of the chat pipeline; *bot.Router
// implements it.
type Pipeline interface {
	// AskDecision queues m, a message asking for a decision, and records
	// it in store before it can be delivered.
	AskDecision(ctx context.Context, store bot.DecisionMessages, m bot.OutboxMessage, kind, subject, role string)
	// EditDecisions shows the outcome in every message about subject.
	EditDecisions(ctx context.Context, store bot.DecisionMessages, kind, subject string, text func(bot.DecisionMessage) string)
	// AnswerPress acknowledges a button press, showing text to the presser.
	AnswerPress(ctx context.Context, in channels.Inbound, text string)
	// Send queues m for delivery.
	Send(ctx context.Context, m bot.OutboxMessage)
}

// Options configures the Guard.
type Options struct {
	Budgets []Budget
	// Prices turn usage into dollars for dollar budgets.
	Prices agentcore.Prices
	// Store keeps overrides and sums the usage records (required).
	Store Store
	// Totals keeps the running totals; nil sums Store on every call.
	Totals   Totals
	Messages bot.DecisionMessages
	// Admins decide overrides (platform:user_id); none: a used-up budget
	// stays used up until its period ends.
	Admins []string
	// AdminChat (platform:chat_id), when set, receives the requests
	// instead of each admin's direct messages.
	AdminChat string
	Logger    *slog.Logger
	// Now is the clock (tests); nil is time.Now.
	Now func() time.Time
}

// Guard checks the budgets before every model call and keeps their running
// totals. It implements agentcore.Meter; put it after the usage recorder
// in agentcore.Meters, so a total rebuilt from the usage records already
// holds the call it is told about.
type Guard struct {
	o    Options
	chat Pipeline
}

var _ agentcore.Meter = (*Guard)(nil)

// New returns the Guard; Attach it to the pipeline before the first run.
func New(o Options) *Guard {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Guard{o: o}
}

// Attach gives g the pipeline it asks the admins through. The Guard exists
// before the pipeline (the agents meter their calls with it, and the
// pipeline needs the agents), so the two are joined once both exist.
func (g *Guard) Attach(p Pipeline) { g.chat = p }

// Admit implements agentcore.Meter: a call whose budget is used up this
// period (beyond any Allow once more) is refused with a reply saying which
// budget, its use, its limit and when it resets, and the admins are asked
// once. A budget that cannot be read refuses nothing silently: the error
// ends the run.
func (g *Guard) Admit(ctx context.Context, c agentcore.MeteredCall) error {
	now := g.o.Now()
	for _, b := range g.o.Budgets {
		subject, ok := b.subject(c)
		if !ok {
			continue
		}
		start, end := period(b.Per, now)
		used, err := g.used(ctx, b, subject, start, end)
		if err != nil {
			return fmt.Errorf("budget %s of %s: %w", b.ID(), subject, err)
		}
		if used < b.Limit {
			continue
		}
		o, found, err := g.o.Store.OverrideFor(ctx, b.ID(), subject, start)
		if err != nil {
			return fmt.Errorf("budget %s of %s: %w", b.ID(), subject, err)
		}
		limit := b.Limit
		if found && o.Status == StatusAllowed {
			// One more period's limit on top of what was used when the
			// admins were asked: a last call that overshot the limit does
			// not eat the raise.
			limit = max(o.Used, b.Limit) + b.Limit
			if used < limit {
				continue
			}
		}
		if !found {
			o.Status = g.ask(ctx, b, subject, start, end, used, c)
		}
		g.o.Logger.Info("model call refused: budget used up", "budget", b.ID(), "subject", subject, "used", used, "limit", limit)
		return &agentcore.RefusedError{Reply: refusalText(b, used, limit, end, o.Status, len(g.o.Admins) > 0)}
	}
	return nil
}

// Record implements agentcore.Meter: the call's tokens (or cost) are
// added to each applying budget's running total, when Redis holds it. A
// missing total is rebuilt by the next Admit from the usage records,
// which hold this call already, so it is never counted twice.
func (g *Guard) Record(ctx context.Context, c agentcore.MeteredCall, u agentcore.Usage) {
	if g.o.Totals == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	now := g.o.Now()
	for _, b := range g.o.Budgets {
		subject, ok := b.subject(c)
		if !ok {
			continue
		}
		n := b.amount(g.o.Prices, c.Model, u)
		if n <= 0 {
			continue
		}
		start, _ := period(b.Per, now)
		if err := g.o.Totals.AddBudgetTotal(ctx, totalKey(b, subject, start), n); err != nil {
			g.o.Logger.Debug("budget total not updated; it is rebuilt from the usage records", "budget", b.ID(), "err", err)
		}
	}
}

// used is the budget's use by subject this period: the running total in
// Redis, rebuilt from PostgreSQL when missing; PostgreSQL alone when Redis
// does not answer.
func (g *Guard) used(ctx context.Context, b Budget, subject string, start, end time.Time) (int64, error) {
	if g.o.Totals == nil {
		return g.o.Store.UsedSince(ctx, b.Scope, subject, b.Dollars, start)
	}
	key := totalKey(b, subject, start)
	n, ok, err := g.o.Totals.BudgetTotal(ctx, key)
	switch {
	case err != nil:
		g.o.Logger.Debug("budget total unreadable; summing the usage records", "budget", b.ID(), "err", err)
		return g.o.Store.UsedSince(ctx, b.Scope, subject, b.Dollars, start)
	case ok:
		return n, nil
	}
	n, err = g.o.Store.UsedSince(ctx, b.Scope, subject, b.Dollars, start)
	if err != nil {
		return 0, err
	}
	seeded, err := g.o.Totals.SeedBudgetTotal(ctx, key, n, end)
	if err != nil {
		return n, nil
	}
	return seeded, nil
}

// totalKey names the running total of budget b for subject in the period
// starting at start.
func totalKey(b Budget, subject string, start time.Time) string {
	return b.ID() + ":" + subject + ":" + strconv.FormatInt(start.Unix(), 10)
}

// byID returns the configured budget named id.
func (g *Guard) byID(id string) (Budget, bool) {
	for _, b := range g.o.Budgets {
		if b.ID() == id {
			return b, true
		}
	}
	return Budget{}, false
}
