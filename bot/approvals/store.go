package approvals

import (
	"context"
	"time"

	"github.com/switchboard-chat/switchboard/bot/quorum"
	"github.com/switchboard-chat/switchboard/channels"
)

// Approval statuses.
const (
	StatusPending       = "pending"
	StatusAllowedOnce   = "allowed_once"
	StatusAllowedAlways = "allowed_always"
	StatusDenied        = "denied"
	StatusExpired       = "expired"
	StatusCancelled     = "cancelled" // withdrawn by the person who asked
)

// Kind names approvals in decision messages and the audit log.
const Kind = "approval"

// Approval is a request for humans to allow one risky tool call.
type Approval struct {
	ID         string // random and unguessable (bot.NewID); travels in button data
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
	// Verb is what allowing does (tools.ApprovalRequest.Verb): "" for a
	// tool call, tools.VerbPublish for publish_skill. A request with a
	// verb offers no "Always allow".
	Verb string

	// The rule it was asked under (approvals.rules), fixed when it was
	// created so that every replica decides it alike.
	Quorum int // distinct people who must allow; 0 or 1: one
	// Approvers may vote (identities); empty: Options.Approvers.
	Approvers   []string
	SelfApprove bool      // the requester's own vote counts
	EscalateAt  time.Time // zero: never escalates
	EscalateTo  []string  // also asked, and may vote, once escalated
	EscalatedAt time.Time // zero: not escalated (yet)
	// Votes so far, oldest first.
	Votes []Vote
}

// Vote is one person's choice on an approval (StatusAllowedOnce,
// StatusAllowedAlways or StatusDenied); a person votes once.
type Vote = quorum.Vote

// VoteOutcome is what a vote did.
type VoteOutcome = quorum.Outcome

// The outcomes of Store.VoteApproval (see quorum.Outcome).
const (
	VoteCounted  = quorum.Counted
	VoteDecided  = quorum.Decided
	VoteRepeated = quorum.Repeated
	VoteClosed   = quorum.Closed
	VoteLate     = quorum.Late
)

// Store keeps approvals durable. Postgres implements it.
type Store interface {
	// CreateApproval stores a (ID, CreatedAt, ExpiresAt set by the caller)
	// unless an approval for the same (Session, ToolCallID) exists, in which
	// case it returns that one with created=false.
	CreateApproval(ctx context.Context, a Approval) (stored Approval, created bool, err error)
	// GetApproval returns the approval or bot.ErrNotFound.
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
	// VoteApproval records v on pending approval id and, in the same
	// transaction with the approval row locked, decides it when v is a
	// deny or the last allow its quorum needs: of concurrent last votes
	// exactly one decides. A quorum's decision is allowed_always only when
	// every allowing vote chose it, else allowed_once. It returns the
	// approval as it is afterwards, votes included, or bot.ErrNotFound.
	VoteApproval(ctx context.Context, id string, v Vote) (Approval, VoteOutcome, error)
	// DueEscalations lists pending approvals whose escalation time has
	// passed and that were not escalated yet, oldest first.
	DueEscalations(ctx context.Context) ([]Approval, error)
	// MarkEscalated records that pending approval id was escalated and
	// reports whether this call did (false: escalated or decided before).
	MarkEscalated(ctx context.Context, id string) (Approval, bool, error)
	// AllowAlways records that pattern may always run for tool.
	AllowAlways(ctx context.Context, tool, pattern, by string) error
	// IsAlwaysAllowed reports whether pattern was always-allowed for tool.
	IsAlwaysAllowed(ctx context.Context, tool, pattern string) (bool, error)
}
