package budgets

import (
	"context"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
)

// Override statuses: an admin is asked (pending), then allows one more
// period's limit for this period (allowed) or keeps the limit (kept).
const (
	StatusPending = "pending"
	StatusAllowed = "allowed"
	StatusKept    = "kept"
)

// Kind names budget overrides in decision messages and the audit log.
const Kind = "budget_override"

// Override is the admins' decision about a budget used up in a period:
// one per budget, subject and period, so they are asked once.
type Override struct {
	// ID is random and unguessable: the buttons name it.
	ID string
	// Budget names the budget (Budget.ID: "user/day/tokens").
	Budget string
	// Subject is whose spending it caps ("telegram:42", "all").
	Subject string
	// PeriodStart and PeriodEnd bound the period (UTC).
	PeriodStart, PeriodEnd time.Time
	// Used and Limit are the use and the limit when it was refused, in
	// tokens or microdollars.
	Used, Limit int64
	// Chat is where the refused person wrote.
	Chat      channels.Address
	Status    string
	DecidedBy string
	CreatedAt time.Time
	DecidedAt time.Time
}

// Store keeps overrides durable and sums the usage records; PostgreSQL
// implements it.
type Store interface {
	// UsedSince sums the usage recorded since since by the subject of
	// scope (user: identity, chat, agent, job; all: everything): tokens
	// (input + output + cache read + cache write), or microdollars when
	// dollars is true.
	UsedSince(ctx context.Context, scope, subject string, dollars bool, since time.Time) (int64, error)
	// OpenOverride stores o as pending, audited, unless one exists for its
	// budget, subject and period: then it returns that one with
	// created=false.
	OpenOverride(ctx context.Context, o Override) (Override, bool, error)
	// OverrideFor returns the override of budget, subject and period;
	// ok is false when there is none.
	OverrideFor(ctx context.Context, budget, subject string, periodStart time.Time) (o Override, ok bool, err error)
	// DecideOverride moves pending override id to status (allowed or
	// kept), decided by by, in one transaction with its audit record. The
	// first decision wins: changed is false when it was decided before.
	// An unknown id gives an error wrapping bot.ErrNotFound.
	DecideOverride(ctx context.Context, id, status, by string) (o Override, changed bool, err error)
}

// Totals keeps the running totals shared by the replicas (Redis). A
// total is a number under key that expires after its period; a key that
// is missing (expired, flushed, Redis restarted) is rebuilt from the
// Store.
type Totals interface {
	// BudgetTotal returns the total under key; ok is false when the key
	// is missing.
	BudgetTotal(ctx context.Context, key string) (total int64, ok bool, err error)
	// SeedBudgetTotal sets key to total, expiring at expireAt, unless the
	// key exists; it returns the value the key holds afterwards.
	SeedBudgetTotal(ctx context.Context, key string, total int64, expireAt time.Time) (int64, error)
	// AddBudgetTotal adds n to key when the key exists; a missing key is
	// left missing (it is rebuilt from the Store, which holds this call's
	// record already, so nothing is counted twice).
	AddBudgetTotal(ctx context.Context, key string, n int64) error
}
