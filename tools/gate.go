package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
)

// The decisions a side-effect class may get (tools.approvals).
const (
	DecisionAllow = "allow"
	DecisionAsk   = "ask"
	DecisionDeny  = "deny"
)

// SelfApproving is implemented by tools that ask the approvers themselves
// with a finer rule than their class (exec judges each command, cron each
// job); the gate leaves them to it.
type SelfApproving interface {
	ApprovesItself()
}

// ApprovalKeyed is implemented by tools whose "Always allow" should cover
// one value of their arguments, not every call: web_fetch by URL host,
// message by destination. The key is stored with the tool and agent.
type ApprovalKeyed interface {
	ApprovalKey(args json.RawMessage) string
}

// Gate applies the side-effect class decisions of one agent to every tool
// call: allow runs it, deny refuses it, ask puts it to the approvers with
// the same durable buttons as exec (showing the tool, its arguments and
// who asked).
type Gate struct {
	// Classes maps a class name (SideEffect.String) to allow, ask or deny;
	// a class missing here is asked.
	Classes  map[string]string
	Approver Approver
	Logger   *slog.Logger
}

// maxShownArgs bounds the arguments shown to approvers.
const maxShownArgs = 2000

// Permitted is implemented by tools that only some agents and people may
// use (an MCP server's, by grant): Permit says whether call may, and if
// not, why, for the model.
type Permitted interface {
	Permit(ctx context.Context, call Call) (why string, ok bool)
}

// Check reports whether the call of t with args may run now; when not,
// res says why or that it waits for an approver.
func (g Gate) Check(ctx context.Context, call Call, t Tool, args json.RawMessage) (res Result, ok bool) {
	if p, guarded := t.(Permitted); guarded {
		// Who may use it at all comes before what needs an approval.
		if why, ok := p.Permit(ctx, call); !ok {
			return ErrorResult(why), false
		}
	}
	if _, self := t.(SelfApproving); self {
		return Result{}, true
	}
	class := t.SideEffect().String()
	decision, set := g.Classes[class]
	if !set {
		decision = DecisionAsk
	}
	switch decision {
	case DecisionAllow:
		return Result{}, true
	case DecisionDeny:
		return ErrorResult(fmt.Sprintf("tool %q may not be used here: its side-effect class (%s) is denied by policy", t.Name(), class)), false
	}
	log := g.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	shown := compactArgs(args)
	pattern := call.Agent + "\x00" + t.Name()
	if k, keyed := t.(ApprovalKeyed); keyed {
		pattern += "\x00" + k.ApprovalKey(args)
	}
	return AskApproval(ctx, log.With("tool", t.Name()), g.Approver, ApprovalRequest{
		Tool: t.Name(), Command: t.Name() + " " + shown, Pattern: pattern, Call: call,
		Class: class, Groups: GroupsOf(t),
	}, "action")
}

// compactArgs renders arguments on one line, bounded.
func compactArgs(args json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, args); err != nil || b.Len() == 0 {
		b.Reset()
		b.WriteString("{}")
	}
	s := b.String()
	if len(s) > maxShownArgs {
		s = s[:maxShownArgs] + "…"
	}
	return s
}
