package bot

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/tools"
)

// DefaultApprovalTimeout is how long an approval waits for a decision.
const DefaultApprovalTimeout = 2 * time.Minute

// ApprovalOptions configures the approval service.
type ApprovalOptions struct {
	Store    ApprovalStore
	Messages DecisionMessages
	// Resume, when set, is called after a decision (a press, an expiry, a
	// withdrawal) so the parked run of a's session goes on. The Router's
	// Resume is meant here.
	Resume   func(ctx context.Context, a Approval)
	Outbox   Outbox
	Channels map[string]channels.Channel
	// Approvers may decide (platform:user_id). Empty: every call that needs
	// approval is refused.
	Approvers []string
	// Chat, when set (platform:chat_id), receives approval requests instead
	// of each approver's direct messages.
	Chat    string
	Timeout time.Duration // default DefaultApprovalTimeout
	Nudge   func()
	Scrub   func(string) string
	Logger  *slog.Logger
}

// Approvals asks approvers to decide risky tool calls with buttons in the
// chat. It implements tools.Approver. Nothing waits for a decision: the
// run parks (tools.PendingError) and a decision on any replica resumes it.
// State lives in the store, so a request survives restarts.
type Approvals struct {
	o        ApprovalOptions
	out      *outboxWriter
	expiries expiryWatch
}

var _ tools.Approver = (*Approvals)(nil)

// NewApprovals returns the approval service.
func NewApprovals(o ApprovalOptions) *Approvals {
	if o.Timeout <= 0 {
		o.Timeout = DefaultApprovalTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Scrub == nil {
		o.Scrub = func(s string) string { return s }
	}
	return &Approvals{o: o, out: &outboxWriter{outbox: o.Outbox, channels: o.Channels, nudge: o.Nudge, scrub: o.Scrub, log: o.Logger}}
}

// Button choices in callback data "ap:<id>:<choice>".
const (
	approvalPrefix = buttonApproval + ":"
	choiceOnce     = "o"
	choiceAlways   = "a"
	choiceDeny     = "d"
)

// AlwaysAllowed implements tools.Approver.
func (s *Approvals) AlwaysAllowed(ctx context.Context, tool, pattern string) (bool, error) {
	return s.o.Store.IsAlwaysAllowed(ctx, tool, pattern)
}

// Approve implements tools.Approver: it records the request (or finds the
// one an earlier attempt of the same step recorded), asks the approvers the
// first time, and returns the decision or a *tools.PendingError. An
// allowed-once decision is used up by the call it returns to; a repeat of
// the step finds it used and asks again.
func (s *Approvals) Approve(ctx context.Context, req tools.ApprovalRequest) (tools.Decision, error) {
	if len(s.o.Approvers) == 0 {
		return tools.Denied, tools.ErrNoApprover
	}
	c := req.Call
	for range 2 {
		now := time.Now()
		a, created, err := s.o.Store.CreateApproval(ctx, Approval{
			ID: newID(), Tool: req.Tool, Command: req.Command, Cwd: req.Cwd, Pattern: req.Pattern, Warnings: req.Warnings,
			Agent: c.Agent, Session: c.Session, ToolCallID: c.ToolCallID, Requester: c.UserID,
			Chat:   channels.Address{Platform: c.Channel, ChatID: c.ChatID, ThreadID: c.ThreadID},
			Status: StatusPending, CreatedAt: now, ExpiresAt: now.Add(s.o.Timeout),
		})
		if err != nil {
			return tools.Denied, fmt.Errorf("record approval: %w", err)
		}
		if created {
			s.o.Logger.Info("approval requested", "approval_id", a.ID, "tool", a.Tool, "session", a.Session)
			s.announce(ctx, a)
		}
		switch a.Status {
		case StatusPending:
			s.expiries.note(a.ExpiresAt)
			if !now.Before(a.ExpiresAt) {
				return s.expire(ctx, a)
			}
			return tools.Denied, &tools.PendingError{Waiting: tools.Waiting{What: a.Command, Since: a.CreatedAt, New: created}}
		case StatusAllowedOnce:
			used, err := s.o.Store.ConsumeApproval(ctx, a.ID)
			if err != nil {
				return tools.Denied, err
			}
			if used {
				return tools.AllowedOnce, nil
			}
			// Used by an earlier execution of this step: ask again.
			s.o.Logger.Info("allowed-once approval already used; asking again", "approval_id", a.ID)
			continue
		}
		return decisionOf(a.Status), nil
	}
	return tools.Denied, fmt.Errorf("approval for %s in %s keeps being used up; not running it", req.Tool, c.Session)
}

// announce posts the request to the approvers and a "waiting" note in the
// requester's chat, remembering the messages to edit them later.
func (s *Approvals) announce(ctx context.Context, a Approval) {
	text := approvalText(a)
	row := []channels.Button{{Label: "Allow once", Data: approvalPrefix + a.ID + ":" + choiceOnce}}
	if len(a.Warnings) == 0 {
		row = append(row, channels.Button{Label: "Always allow", Data: approvalPrefix + a.ID + ":" + choiceAlways})
	}
	buttons := [][]channels.Button{append(row, channels.Button{Label: "Deny", Data: approvalPrefix + a.ID + ":" + choiceDeny})}
	for _, to := range approverAddresses(s.o.Chat, s.o.Approvers) {
		s.out.askDecision(ctx, s.o.Messages, OutboxMessage{To: to, Text: text, Buttons: buttons}, KindApproval, a.ID, "approver")
	}
	if a.Chat.Platform != "" && !s.isApproverChat(a.Chat) {
		what := "action"
		if a.Tool == "exec" {
			what = "command"
		}
		s.out.askDecision(ctx, s.o.Messages, OutboxMessage{To: a.Chat,
			Text: "⏳ Waiting for an approver to allow this " + what + ":\n" + commandBlock(a.Command) +
				"\nI'll go on when they decide; /cancel withdraws it."}, KindApproval, a.ID, "requester")
	}
}

func (s *Approvals) isApproverChat(to channels.Address) bool {
	for _, a := range approverAddresses(s.o.Chat, s.o.Approvers) {
		if a.Platform == to.Platform && a.ChatID == to.ChatID {
			return true
		}
	}
	return false
}

// approverAddresses is where requests go: the configured chat, else each
// approver's direct messages.
func approverAddresses(chat string, approvers []string) []channels.Address {
	if chat != "" {
		if to, err := channels.ParseAddress(chat); err == nil {
			return []channels.Address{to}
		}
	}
	var out []channels.Address
	for _, id := range approvers {
		if to, ok := directAddress(id); ok {
			out = append(out, to)
		}
	}
	return out
}

func approvalText(a Approval) string {
	var b strings.Builder
	fmt.Fprintf(&b, "🔐 *Approval needed* — %s wants to run `%s`", whoAsks(a.Agent, a.Session), a.Tool)
	fmt.Fprintf(&b, "\nAsked by %s in %s", a.Requester, a.Chat.String())
	if a.Cwd != "" {
		fmt.Fprintf(&b, ", in folder %s", a.Cwd)
	}
	b.WriteString(":\n" + commandBlock(a.Command))
	b.WriteString(warningLines(a))
	if len(a.Warnings) > 0 {
		b.WriteString("\n\"Always allow\" is not offered for a command flagged dangerous.")
	}
	fmt.Fprintf(&b, "\nExpires at %s UTC if nobody decides.", a.ExpiresAt.UTC().Format("15:04:05"))
	return b.String()
}

// whoAsks names the agent behind session: the agent itself, a teammate
// working for a team, or a subagent of which agent.
func whoAsks(agent, session string) string {
	scope := tools.ScopeOf(session)
	if _, parent, ok := tools.ParseSubScope(scope); ok {
		return fmt.Sprintf("a subagent of %s (session %s)", tools.AgentOf(parent), parent)
	}
	if team, _, ok := tools.ParseTeamScope(scope); ok {
		return fmt.Sprintf("agent %s, working for team %s,", agent, team)
	}
	return "agent " + agent
}

// warningLines renders why the exec guard flagged a's command as
// dangerous, one line each, or "".
func warningLines(a Approval) string {
	var b strings.Builder
	for _, w := range a.Warnings {
		b.WriteString("\n⚠️ Dangerous: " + w)
	}
	return b.String()
}

// expire turns a pending approval whose time is up into expired and edits
// its messages; when a press won the race, that decision stands.
func (s *Approvals) expire(ctx context.Context, a Approval) (tools.Decision, error) {
	after, changed, err := s.o.Store.DecideApproval(ctx, a.ID, StatusExpired, "system")
	if err != nil {
		return tools.Denied, fmt.Errorf("expire approval: %w", err)
	}
	if changed {
		s.o.Logger.Info("approval expired", "approval_id", a.ID)
		s.finish(ctx, after)
	}
	return decisionOf(after.Status), nil
}

// ErrDangerousAlways refuses Always allow for a command the exec guard
// flagged dangerous: no such button is shown, so a press or an API call
// asking for it is stale or forged.
var ErrDangerousAlways = errors.New(`"Always allow" is not offered for a command flagged dangerous; allow once or deny`)

// Decide handles a press on an approval button: only approvers decide,
// the first valid press wins, every press is answered.
func (s *Approvals) Decide(ctx context.Context, in channels.Inbound, id, choice string) {
	presser := in.Identity()
	if !slices.Contains(s.o.Approvers, presser) {
		s.o.Logger.Warn("approval press by a non-approver", "approval_id", id, "presser", presser)
		s.out.answer(ctx, in, "You may not decide this.")
		return
	}
	status, ok := map[string]string{choiceOnce: StatusAllowedOnce, choiceAlways: StatusAllowedAlways, choiceDeny: StatusDenied}[choice]
	if !ok {
		s.out.answer(ctx, in, "This button is no longer active.")
		return
	}
	a, changed, err := s.DecideAs(ctx, id, status, presser)
	switch {
	case errors.Is(err, ErrDangerousAlways):
		s.o.Logger.Warn("always-allow press on a command flagged dangerous", "approval_id", id, "presser", presser)
		s.out.answer(ctx, in, "\"Always allow\" is not offered for a command flagged dangerous; press Allow once or Deny.")
	case errors.Is(err, ErrNotFound):
		s.out.answer(ctx, in, "This request no longer exists.")
	case err != nil:
		s.out.answer(ctx, in, "Could not record your decision (storage unavailable); press again in a moment.")
	case !changed:
		s.out.answer(ctx, in, "Already decided: "+statusText(a))
	default:
		s.out.answer(ctx, in, "Done: "+decisionOf(a.Status).String()+".")
	}
}

// DecideAs decides approval id with status (StatusAllowedOnce,
// StatusAllowedAlways or StatusDenied) on behalf of by — an approver's
// press, or the admin API — edits its messages and lets its run go on.
// The first decision wins: changed is false when it was decided before.
func (s *Approvals) DecideAs(ctx context.Context, id, status, by string) (Approval, bool, error) {
	if status != StatusAllowedOnce && status != StatusAllowedAlways && status != StatusDenied {
		return Approval{}, false, fmt.Errorf("%q is not a decision", status)
	}
	if status == StatusAllowedAlways {
		cur, err := s.o.Store.GetApproval(ctx, id)
		if err != nil && !errors.Is(err, ErrNotFound) {
			s.o.Logger.Error("load approval", "approval_id", id, "err", err)
			return Approval{}, false, err
		}
		if err == nil && len(cur.Warnings) > 0 {
			return cur, false, ErrDangerousAlways
		}
	}
	a, changed, err := s.o.Store.DecideApproval(ctx, id, status, by)
	if err != nil {
		if !errors.Is(err, ErrNotFound) {
			s.o.Logger.Error("decide approval", "approval_id", id, "err", err)
		}
		return a, false, err
	}
	if !changed {
		return a, false, nil
	}
	s.o.Logger.Info("approval decided", "approval_id", id, "status", a.Status, "by", by)
	if a.Status == StatusAllowedAlways {
		if err := s.o.Store.AllowAlways(ctx, a.Tool, a.Pattern, by); err != nil {
			s.o.Logger.Error("store always-allow pattern", "approval_id", id, "err", err)
		}
	}
	s.finish(ctx, a)
	s.resume(ctx, a)
	return a, true, nil
}

// resume lets the parked run of a's session go on.
func (s *Approvals) resume(ctx context.Context, a Approval) {
	if s.o.Resume != nil && a.Session != "" {
		s.o.Resume(ctx, a)
	}
}

// ExpireDue expires the pending approvals whose time is up, edits their
// messages and resumes their runs (which tell the model nobody answered).
// Every replica may call it; each approval expires once. It asks the store
// only when an approval can be due: when one it knows of expires, and at
// least every approvalLookEvery (expiryWatch).
func (s *Approvals) ExpireDue(ctx context.Context) (int, error) {
	now := time.Now()
	if !s.expiries.begin(now) {
		return 0, nil
	}
	due, next, err := s.o.Store.DueApprovals(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, a := range due {
		after, changed, err := s.o.Store.DecideApproval(ctx, a.ID, StatusExpired, "system")
		if err != nil {
			return n, fmt.Errorf("expire approval %s: %w", a.ID, err)
		}
		if !changed {
			continue // decided meanwhile, here or elsewhere
		}
		n++
		s.o.Logger.Info("approval expired", "approval_id", a.ID)
		s.finish(ctx, after)
		s.resume(ctx, after)
	}
	s.expiries.looked(now, next)
	return n, nil
}

// Cancel withdraws the pending approvals of session that by asked for (or
// any of them when by is an approver) and edits their messages. It returns
// what it withdrew; the caller resumes those runs (Resume), which tell the
// model the user cancelled, once it has confirmed the withdrawal.
func (s *Approvals) Cancel(ctx context.Context, session, by string) ([]Approval, error) {
	pending, err := s.o.Store.PendingApprovalsOf(ctx, session)
	if err != nil {
		return nil, err
	}
	var done []Approval
	for _, a := range pending {
		if a.Requester != by && !s.IsApprover(by) {
			continue
		}
		after, changed, err := s.o.Store.DecideApproval(ctx, a.ID, StatusCancelled, by)
		if err != nil {
			return done, fmt.Errorf("cancel approval %s: %w", a.ID, err)
		}
		if !changed {
			continue
		}
		s.o.Logger.Info("approval cancelled", "approval_id", a.ID, "by", by)
		done = append(done, after)
		s.finish(ctx, after)
	}
	return done, nil
}

// Resume lets the parked run of decided approval a go on.
func (s *Approvals) Resume(ctx context.Context, a Approval) { s.resume(ctx, a) }

// finish edits every message about a to show the outcome, without buttons.
func (s *Approvals) finish(ctx context.Context, a Approval) {
	if s.o.Messages == nil {
		return
	}
	s.out.editDecisions(ctx, s.o.Messages, KindApproval, a.ID, func(m DecisionMessage) string {
		text := statusIcon(a.Status) + " " + statusText(a) + "\n" + commandBlock(a.Command) + warningLines(a)
		if m.Role == "requester" && a.Status == StatusExpired {
			text += "\nAsk again if it is still needed."
		}
		return text
	})
}

// Pending lists pending approvals for /approvals.
func (s *Approvals) Pending(ctx context.Context) ([]Approval, error) {
	return s.o.Store.PendingApprovals(ctx)
}

// IsApprover reports whether identity may decide approvals.
func (s *Approvals) IsApprover(identity string) bool { return slices.Contains(s.o.Approvers, identity) }

func statusText(a Approval) string {
	switch a.Status {
	case StatusPending:
		return "waiting for a decision"
	case StatusExpired:
		return "Expired: nobody decided in time, so it did not run."
	case StatusCancelled:
		return "Withdrawn by " + a.DecidedBy + ", so it did not run."
	}
	return fmt.Sprintf("%s by %s", capitalize(decisionOf(a.Status).String()), a.DecidedBy)
}

func statusIcon(status string) string {
	switch status {
	case StatusAllowedOnce, StatusAllowedAlways, StatusApproved:
		return "✅"
	case StatusExpired:
		return "⌛"
	case StatusCancelled:
		return "↩️"
	}
	return "⛔"
}

func decisionOf(status string) tools.Decision {
	switch status {
	case StatusAllowedOnce:
		return tools.AllowedOnce
	case StatusAllowedAlways:
		return tools.AllowedAlways
	case StatusExpired:
		return tools.Expired
	case StatusCancelled:
		return tools.Cancelled
	}
	return tools.Denied
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// newID returns a random, unguessable id (100 bits, 20 characters) short
// enough for Telegram's 64-byte button data.
func newID() string {
	var b [13]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:])[:20])
}
