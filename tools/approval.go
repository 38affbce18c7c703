package tools

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
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
	// Class is the tool's side-effect class (SideEffect.String) and
	// Groups the tool groups it belongs to: approvals.rules match on them.
	Class  string
	Groups []string
	// Warnings say why the request is dangerous though allowed to be
	// asked (the exec guard's warnings). Such a request is always asked:
	// "Always allow" is neither offered nor honoured for it.
	Warnings []string
	// Verb, when set, is what allowing does, and the approvers' buttons
	// say it instead of Allow once / Deny ("publish": Publish / Reject);
	// such a request never offers "Always allow". Empty: a tool call.
	Verb string
}

// VerbPublish asks the approvers to publish something (publish_skill):
// its buttons read Publish and Reject.
const VerbPublish = "publish"

// Decision is the outcome of an approval request.
type Decision int

// The decisions.
const (
	Denied Decision = iota
	AllowedOnce
	AllowedAlways
	Expired
	// Cancelled: the person who asked withdrew the request (/cancel).
	Cancelled
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
	case Cancelled:
		return "cancelled"
	}
	return "denied"
}

// Allowed reports whether the call may run.
func (d Decision) Allowed() bool { return d == AllowedOnce || d == AllowedAlways }

// Approver decides risky tool calls. The bot implements it with buttons in
// the chat. Requests are durable and never waited for: while one is
// undecided, Approve returns a *PendingError and the tool returns a Result
// with Waiting set, which parks the run; the decision resumes the run, the
// same call (same Call.Session and Call.ToolCallID) is made again and
// Approve then returns the decision.
type Approver interface {
	// AlwaysAllowed reports whether pattern was always-allowed for tool.
	AlwaysAllowed(ctx context.Context, tool, pattern string) (bool, error)
	// Approve records the request (once per Call.Session and ToolCallID),
	// asks the approvers the first time and returns the decision, or a
	// *PendingError while there is none. An AllowedOnce decision is handed
	// out once: a second call for the same step asks again.
	Approve(ctx context.Context, req ApprovalRequest) (Decision, error)
}

// ErrNoApprover is returned when a call needs approval but none is set up.
var ErrNoApprover = errors.New("this action needs approval but no approvers are configured")

// noApproverHint tells the person (through the model) how approvals start
// working: asking again cannot help until someone is named. The example
// identity is on the platform the person is on (the console's operator
// is always console:local), so it can be copied as it is.
func noApproverHint(c Call) string {
	platform := c.Channel
	if platform == "" {
		platform, _, _ = strings.Cut(c.UserID, ":")
	}
	example := "SWITCHBOARD_ADMINS=console:local"
	switch platform {
	case "console":
	case "":
		example = "SWITCHBOARD_ADMINS=<platform>:<your user id> (/whoami shows it)"
	default:
		example = "SWITCHBOARD_ADMINS=" + platform + ":<your user id> (/whoami shows it)"
	}
	return "this needs an approver's OK, but nobody can approve: approvals cannot work until " +
		"`admins` (or `approvals.approvers`) names someone, e.g. " + example
}

// ErrPending matches every *PendingError.
var ErrPending = errors.New("waiting for a decision")

// PendingError says an approval request waits for a human.
type PendingError struct {
	Waiting Waiting
}

func (e *PendingError) Error() string {
	return fmt.Sprintf("waiting for an approver to allow %s (asked %s)", e.Waiting.What, e.Waiting.Since.UTC().Format(time.RFC3339))
}

// Is makes errors.Is(err, ErrPending) true.
func (e *PendingError) Is(target error) bool { return target == ErrPending }

// Waiting describes a tool call parked until a human decides.
type Waiting struct {
	What  string    // what was asked, e.g. the command
	Since time.Time // when it was asked
	// New is true when this call made the request (the approvers were just
	// asked), false when it found one already waiting.
	New bool
	// For names the one person whose answer the call waits for
	// (platform:user_id, a question of ask_user); empty: an approver's
	// decision.
	For string
}

// AskApproval asks approver about req unless pattern was always-allowed.
// ok is true when the call may run; otherwise res is the Result to return:
// a refusal the model reads, or a parked Result while the request waits.
// what names the action in refusals ("command", "change").
func AskApproval(ctx context.Context, log *slog.Logger, approver Approver, req ApprovalRequest, what string) (res Result, ok bool) {
	if approver == nil {
		return ErrorResult(noApproverHint(req.Call)), false
	}
	if len(req.Warnings) == 0 && req.Verb == "" {
		always, err := approver.AlwaysAllowed(ctx, req.Tool, req.Pattern)
		if err != nil {
			log.Error("always-allowed lookup", "tool", req.Tool, "error", err)
			always = false // fall back to asking
		}
		if always {
			return Result{}, true
		}
	}
	dec, err := approver.Approve(ctx, req)
	var pending *PendingError
	switch {
	case errors.As(err, &pending):
		w := pending.Waiting
		return Result{ForLLM: "waiting for an approver", Waiting: &w}, false
	case err != nil && ctx.Err() != nil:
		return ErrorResult("cancelled while waiting for approval"), false
	case errors.Is(err, ErrNoApprover):
		return ErrorResult(noApproverHint(req.Call)), false
	case err != nil:
		log.Error("approval", "tool", req.Tool, "error", err)
		return ErrorResult("could not ask the approvers right now; try again later"), false
	}
	log.Info("approval decision", "tool", req.Tool, "decision", dec.String())
	switch dec {
	case AllowedOnce, AllowedAlways:
		return Result{}, true
	case Expired:
		return ErrorResult("no approver answered in time; ask again if still needed"), false
	case Cancelled:
		return ErrorResult("cancelled by the user: this " + what + " did not run"), false
	}
	return ErrorResult("the approvers denied this " + what), false
}
