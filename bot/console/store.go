package console

import (
	"context"
	"errors"
	"time"
)

// ErrInvalidLink is returned for a login link that does not exist, was
// used already or has expired: the three look the same to whoever holds
// it.
var ErrInvalidLink = errors.New("this login link is not valid (used already, expired or mistyped); send /login to the bot for a new one")

// ErrNoSession is returned for a session cookie that names no live
// session: unknown, ended, idle too long or past its absolute expiry.
var ErrNoSession = errors.New("no live console session")

// Audit actions the console's store writes.
const (
	ActionLogin  = "console.login"
	ActionLogout = "console.logout"
)

// Session is a live console session.
type Session struct {
	// Identity is the admin (platform:user_id), or TokenActor for a
	// session opened with http.admin_token.
	Identity string
	// CSRF is the synchronizer token every state-changing request of the
	// session carries.
	CSRF string
	// ExpiresAt is the absolute expiry.
	ExpiresAt time.Time
}

// NewSession is a session to store: only the hash of its id is kept.
type NewSession struct {
	IDHash   []byte
	Identity string
	CSRF     string
	// Idle ends the session when no page was opened for this long.
	Idle time.Duration
	// Lifetime ends it this long after it began, active or not.
	Lifetime time.Duration
	// Via says how the admin logged in ("link" or "token"), for the audit.
	Via string
}

// AuditFilter selects audit log entries; zero fields select everything.
type AuditFilter struct {
	Actor  string // exactly this identity
	Action string // exactly this action, or every action under it when it ends in "."
	// Tool selects the entries about approvals of this tool, and those
	// whose detail names it.
	Tool string
	// Outcome selects the entries whose detail has this status
	// (allowed_once, denied, approved…).
	Outcome string
	Since   time.Time
	Until   time.Time
	// Before pages back: only entries with an ID below it (0: from the
	// newest).
	Before int64
	Limit  int
}

// AuditEntry is one audit log record as the console shows it.
type AuditEntry struct {
	ID          int64
	At          time.Time
	Actor       string
	Action      string
	SubjectKind string
	SubjectID   string
	Detail      map[string]any
}

// Replica is a replica that said recently it is alive.
type Replica struct {
	Name   string
	SeenAt time.Time
}

// Usage groupings the Usage page offers.
const (
	UsageByAgent    = "agent"
	UsageByModel    = "model"
	UsageByIdentity = "identity"
)

// UsageDay is one UTC day's model usage of one agent, model or identity.
type UsageDay struct {
	Day    time.Time
	Key    string
	Tokens int64 // all of them, cached ones included
	// CostMicros sums the priced calls; Unpriced counts the calls without
	// a price, whose cost is unknown.
	CostMicros int64
	Unpriced   int64
}

// AllowedIdentity is someone let in at run time (an approved access
// request), not by the configuration.
type AllowedIdentity struct {
	Identity, DisplayName, AllowedBy string
	Since                            time.Time
}

// Conversation is one session as the Conversations page lists it.
type Conversation struct {
	Key, Agent, Scope string
	// Messages is the number of the newest message (its seq).
	Messages  int64
	UpdatedAt time.Time
}

// ConversationMessage is one stored step of a conversation.
type ConversationMessage struct {
	Seq       int64
	Role      string // user, assistant, tool
	Content   string
	ToolCalls []ToolCall // the steps an assistant message asked for
	ToolName  string     // of a tool result
	IsError   bool
	At        time.Time
}

// ToolCall is one tool call an assistant message asked for.
type ToolCall struct {
	Name, Arguments string
}

// SessionApproval is an approval asked in a conversation.
type SessionApproval struct {
	ID, Tool, Command, Status, DecidedBy string
	CreatedAt                            time.Time
}

// Store keeps login links and sessions, and reads what the pages show;
// storage/postgres implements it. Times are the database's, so replicas
// agree on expiry.
type Store interface {
	// CreateLoginLink stores the hash of a new login link for identity,
	// valid for ttl.
	CreateLoginLink(ctx context.Context, hash []byte, identity string, ttl time.Duration) error
	// UseLoginLink marks the link used, in one atomic change that only an
	// unused, unexpired link passes, and returns its identity; otherwise
	// ErrInvalidLink.
	UseLoginLink(ctx context.Context, hash []byte) (identity string, err error)
	// CreateSession stores s and audits the login.
	CreateSession(ctx context.Context, s NewSession) error
	// Session returns the live session with this id hash, or ErrNoSession.
	// With touch its idle expiry starts again.
	Session(ctx context.Context, idHash []byte, idle time.Duration, touch bool) (Session, error)
	// EndSession ends one session (a logout from the console).
	EndSession(ctx context.Context, idHash []byte, by string) error
	// EndSessions ends every live session of identity and says how many.
	EndSessions(ctx context.Context, identity, by string) (int, error)
	// AuditPage returns the entries f selects, newest first.
	AuditPage(ctx context.Context, f AuditFilter) ([]AuditEntry, error)
	// UsageByDay sums the model usage since then per UTC day and key of
	// grouping by (UsageByAgent, UsageByModel or UsageByIdentity), oldest
	// day first.
	UsageByDay(ctx context.Context, by string, since time.Time) ([]UsageDay, error)
	// AllowedIdentities lists the identities allowed at run time, newest
	// first.
	AllowedIdentities(ctx context.Context) ([]AllowedIdentity, error)
	// Conversations lists sessions by recency, newest first: those whose
	// key, agent or scope (the chat) contains search, at most limit.
	Conversations(ctx context.Context, search string, limit int) ([]Conversation, error)
	// ConversationMessages returns the newest limit messages of session
	// key before seq before (0: the newest), oldest first.
	ConversationMessages(ctx context.Context, key string, before int64, limit int) ([]ConversationMessage, error)
	// SessionApprovals lists the approvals asked in session key, newest
	// first.
	SessionApprovals(ctx context.Context, key string) ([]SessionApproval, error)
	// Replicas lists the replicas that heartbeat now (those with work in
	// flight), newest first.
	Replicas(ctx context.Context) ([]Replica, error)
}
