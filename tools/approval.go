package tools

import (
	"context"
	"errors"
)

// ApprovalRequest asks the humans whether a risky tool call may run.
type ApprovalRequest struct {
	Tool    string // e.g. "exec"
	Command string // exactly what will run, as the approvers must see it
	Cwd     string // working directory, relative to the workspace
	// Pattern is the normalized form stored by "Always allow" and matched
	// against later calls (for exec: the parsed argv, never the first word).
	Pattern string
	Call    Call // where and for whom; Call.ToolCallID makes the request idempotent
}

// Decision is the outcome of an approval request.
type Decision int

// The decisions.
const (
	Denied Decision = iota
	AllowedOnce
	AllowedAlways
	Expired
)

// String returns the decision as shown in messages and the audit log.
func (d Decision) String() string {
	switch d {
	case AllowedOnce:
		return "allowed once"
	case AllowedAlways:
		return "always allowed"
	case Expired:
		return "expired"
	}
	return "denied"
}

// Allowed reports whether the call may run.
func (d Decision) Allowed() bool { return d == AllowedOnce || d == AllowedAlways }

// Approver decides risky tool calls. The bot implements it with buttons in
// the chat; the request is durable, so a call resumed after a restart with
// the same Call.Session and Call.ToolCallID waits on the same request.
type Approver interface {
	// AlwaysAllowed reports whether pattern was always-allowed for tool.
	AlwaysAllowed(ctx context.Context, tool, pattern string) (bool, error)
	// Approve blocks until the request is decided, expires or ctx ends.
	Approve(ctx context.Context, req ApprovalRequest) (Decision, error)
}

// ErrNoApprover is returned when a call needs approval but none is set up.
var ErrNoApprover = errors.New("this action needs approval but no approvers are configured")
