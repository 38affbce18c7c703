package usage

import (
	"context"
	"time"
)

// Tokens are the token counts of one call or of many summed. Input
// excludes the tokens served from or written to the prompt cache, which
// are counted apart (agentcore.Usage).
type Tokens struct {
	Input, Output, CacheRead, CacheWrite int64
}

// All is every token of t, of all kinds.
func (t Tokens) All() int64 { return t.Input + t.Output + t.CacheRead + t.CacheWrite }

// CacheShare is the share of the input served from the cache:
// cache_read / (input + cache_read + cache_write); 0 without input.
func (t Tokens) CacheShare() float64 {
	in := t.Input + t.CacheRead + t.CacheWrite
	if in <= 0 {
		return 0
	}
	return float64(t.CacheRead) / float64(in)
}

// Record is one model call's usage, as stored.
type Record struct {
	At time.Time
	// Identity is who started the run (platform:user_id), "" for none.
	Identity string
	// Chat is the run's chat (platform:chat_id), "" for none.
	Chat  string
	Agent string
	// Model is the model that answered.
	Model string
	// Job is the scheduled job the run was for, "" when none.
	Job     string
	Session string
	Tokens  Tokens
	// CostMicros is the call's cost in millionths of a dollar at the
	// prices in force; nil when the model has no price.
	CostMicros *int64
}

// Grouping keys: what sums are grouped by (Query.GroupBy).
const (
	ByIdentity = "identity"
	ByChat     = "chat"
	ByAgent    = "agent"
	ByModel    = "model"
	ByJob      = "job"
)

// GroupBys are the groupings the store and the admin API accept, in the
// order error messages name them.
var GroupBys = []string{ByIdentity, ByChat, ByAgent, ByModel, ByJob}

// MaxRows bounds the groups one query returns.
const MaxRows = 500

// Query asks for usage sums since a time, optionally only of one
// identity, chat, agent, model or job ("" matches any).
type Query struct {
	// GroupBy is one of GroupBys; "" sums everything into one Total
	// (with key "").
	GroupBy string
	Since   time.Time
	// Until, when set, ends the window (exclusive).
	Until                             time.Time
	Identity, Chat, Agent, Model, Job string
	// Limit bounds the groups returned, largest first (by all tokens);
	// 0 or more than MaxRows means MaxRows.
	Limit int
}

// Total is the usage of one group.
type Total struct {
	Key    string
	Tokens Tokens
	// CostMicros sums the priced calls' costs; PricedCalls says how many
	// of Calls had a price (none: the cost is unknown).
	CostMicros  int64
	PricedCalls int64
	Calls       int64
}

// CostDollars is the group's cost in dollars; nil when no call in it was
// priced.
func (t Total) CostDollars() *float64 {
	if t.PricedCalls == 0 {
		return nil
	}
	d := float64(t.CostMicros) / 1e6
	return &d
}

// Store keeps the usage records; storage/postgres implements it.
type Store interface {
	// InsertUsage stores one call's record.
	InsertUsage(ctx context.Context, r Record) error
	// SumUsage sums the records q selects, grouped as q asks; a grouping
	// not in GroupBys is an error. Without GroupBy it returns one Total,
	// zero when nothing matched.
	SumUsage(ctx context.Context, q Query) ([]Total, error)
}
