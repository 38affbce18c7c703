package bot

import (
	"context"
	"errors"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
)

// ErrNotFound is returned by stores when a record does not exist.
var ErrNotFound = errors.New("not found")

// ErrTooManyPending is returned when the cap on pending access requests of
// a platform is reached.
var ErrTooManyPending = errors.New("too many pending access requests")

// Approval statuses.
const (
	StatusPending       = "pending"
	StatusAllowedOnce   = "allowed_once"
	StatusAllowedAlways = "allowed_always"
	StatusDenied        = "denied"
	StatusExpired       = "expired"
	StatusCancelled     = "cancelled" // withdrawn by the person who asked
	StatusApproved      = "approved"  // access requests
)

// Approval is a request for humans to allow one risky tool call.
type Approval struct {
	ID         string // random and unguessable; travels in button data
	Tool       string
	Command    string // exactly what will run
	Cwd        string
	Pattern    string // normalized form stored by "Always allow"
	Agent      string
	Session    string
	ToolCallID string
	Requester  string           // platform:user_id of who started the run
	Chat       channels.Address // where the run happens
	Status     string
	DecidedBy  string // platform:user_id, or "system" for expiry
	CreatedAt  time.Time
	ExpiresAt  time.Time
	DecidedAt  time.Time
	// Warnings say why the command is dangerous though not blocked; an
	// approval with warnings offers no "Always allow".
	Warnings []string
}

// AccessRequest is an unknown person's request to talk to the agents.
type AccessRequest struct {
	ID          string
	Identity    string // platform:user_id
	DisplayName string
	Chat        channels.Address // where they wrote from (to tell them the outcome)
	Status      string           // pending, approved, denied
	DecidedBy   string
	CreatedAt   time.Time
	DecidedAt   time.Time
}

// DecisionMessage is a message posted about an approval or access request
// (to an approver, or the "waiting…" note in the requester's chat), so it
// can be edited once decided.
type DecisionMessage struct {
	OutboxID          int64
	Role              string // "approver" or "requester"
	To                channels.Address
	PlatformMessageID string // empty until delivered
}

// Decision subject kinds, for DecisionMessage bookkeeping and the audit log.
const (
	KindApproval      = "approval"
	KindAccessRequest = "access_request"
)

// ApprovalStore keeps approvals durable. Postgres implements it.
type ApprovalStore interface {
	// CreateApproval stores a (ID, CreatedAt, ExpiresAt set by the caller)
	// unless an approval for the same (Session, ToolCallID) exists, in which
	// case it returns that one with created=false.
	CreateApproval(ctx context.Context, a Approval) (stored Approval, created bool, err error)
	// GetApproval returns the approval or ErrNotFound.
	GetApproval(ctx context.Context, id string) (Approval, error)
	// DecideApproval atomically moves a pending approval to status, decided
	// by `by`, and writes the audit record in the same transaction. It
	// returns the approval as it is afterwards and whether this call made
	// the transition (false: it was decided before; nothing changed).
	// Expiry is a decision with StatusExpired by "system"; a withdrawal is
	// StatusCancelled by the requester.
	DecideApproval(ctx context.Context, id, status, by string) (Approval, bool, error)
	// ConsumeApproval records that the allowed-once approval id was used to
	// run its call (audited) and reports whether this call used it: false
	// when it was used before, so a second execution must ask again.
	ConsumeApproval(ctx context.Context, id string) (bool, error)
	// PendingApprovals lists pending approvals, oldest first.
	PendingApprovals(ctx context.Context) ([]Approval, error)
	// PendingApprovalsOf lists the session's pending approvals, oldest first.
	PendingApprovalsOf(ctx context.Context, session string) ([]Approval, error)
	// DueApprovals lists pending approvals whose time is up, oldest first,
	// and returns when to look again: when the next pending approval
	// expires, zero when none is pending, or a time already past when it
	// listed fewer than are due.
	DueApprovals(ctx context.Context) (due []Approval, next time.Time, err error)
	// AllowAlways records that pattern may always run for tool.
	AllowAlways(ctx context.Context, tool, pattern, by string) error
	// IsAlwaysAllowed reports whether pattern was always-allowed for tool.
	IsAlwaysAllowed(ctx context.Context, tool, pattern string) (bool, error)
}

// AccessRequestStore keeps access requests durable. Postgres implements it.
type AccessRequestStore interface {
	// OpenAccessRequest stores r as pending unless the identity has a
	// pending request, or a denied one newer than cooldown; then it returns
	// that one with created=false. When the platform of r already has
	// maxPending pending requests it returns ErrTooManyPending.
	OpenAccessRequest(ctx context.Context, r AccessRequest, maxPending int, cooldown time.Duration) (AccessRequest, bool, error)
	// GetAccessRequest returns the request or ErrNotFound.
	GetAccessRequest(ctx context.Context, id string) (AccessRequest, error)
	// DecideAccessRequest atomically moves a pending request to status
	// (approved or denied); approval also allows the identity — all with
	// the audit record, in one transaction.
	DecideAccessRequest(ctx context.Context, id, status, by string) (AccessRequest, bool, error)
	// Revoke disallows identity (audited) and reports whether it was allowed.
	Revoke(ctx context.Context, identity, by string) (bool, error)
}

// DecisionMessages remembers the messages posted about a decision.
type DecisionMessages interface {
	AddDecisionMessage(ctx context.Context, kind, subjectID string, outboxID int64, role string) error
	// DecisionMessagesOf lists them with the platform message id the outbox
	// recorded on delivery.
	DecisionMessagesOf(ctx context.Context, kind, subjectID string) ([]DecisionMessage, error)
}

// Waker wakes waiters across replicas (Redis pub/sub). It is only a hint:
// waiters also poll the store, which is the truth.
type Waker interface {
	Wake(ctx context.Context, key string) error
	// Subscribe returns a channel that receives a value for each Wake of
	// key, and a func to stop.
	Subscribe(ctx context.Context, key string) (<-chan struct{}, func(), error)
}
