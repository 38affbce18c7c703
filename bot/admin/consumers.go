package admin

import (
	"context"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/access"
	"github.com/switchboard-chat/switchboard/bot/approvals"
	"github.com/switchboard-chat/switchboard/bot/customtools"
	"github.com/switchboard-chat/switchboard/tools/exec"
	"github.com/switchboard-chat/switchboard/tools/sessions"
)

// Approvals lists and decides the approvals that wait for an approver
// (the approvals feature implements it).
type Approvals interface {
	// Pending lists the approvals still waiting.
	Pending(ctx context.Context) ([]approvals.Approval, error)
	// Vote records by's vote for status (a decision, when the approval
	// needs one person) and says what it did.
	Vote(ctx context.Context, id, status, by string) (approvals.Approval, approvals.VoteOutcome, error)
}

// AccessRequests lists the access requests that wait for an admin (the
// store implements it).
type AccessRequests interface {
	PendingAccessRequests(ctx context.Context) ([]access.Request, error)
}

// AccessDecisions decides an access request and tells the person (the
// access feature implements it).
type AccessDecisions interface {
	// DecideAccessAs records status as decided by by; changed is false
	// when it was decided already.
	DecideAccessAs(ctx context.Context, id, status, by string) (q access.Request, changed bool, err error)
}

// Agents describes the configured agents (the Router implements it).
type Agents interface {
	// DescribedAgents returns every agent with its description and model;
	// empty when only the default agent is configured.
	DescribedAgents() []bot.AgentInfo
	// DefaultAgent returns the name of the agent that answers where no
	// binding chooses another.
	DefaultAgent() string
}

// Sessions lists an agent's sessions (the store implements it).
type Sessions interface {
	ListSessions(ctx context.Context, agent, scope string, limit int) ([]sessions.SessionInfo, error)
}

// Grants lists and changes grants directly (Postgres implements it).
type Grants interface {
	ListGrants(ctx context.Context) ([]access.Grant, error)
	PutGrant(ctx context.Context, g access.Grant) error
	DeleteGrant(ctx context.Context, server, kind, subject, by string) (bool, error)
}

// CustomTools lists, adds and removes the custom tools defined at run
// time (customtools.Catalog implements it, for /tools too).
type CustomTools interface {
	List(ctx context.Context) ([]exec.CustomSpec, error)
	// Add checks, stores and installs d; the message says what happened,
	// err is set when it was not added.
	Add(ctx context.Context, d customtools.Definition, by string) (string, error)
	// Remove deletes and uninstalls the stored tool name.
	Remove(ctx context.Context, name, by string) (bool, error)
}

var _ CustomTools = (*customtools.Catalog)(nil)
