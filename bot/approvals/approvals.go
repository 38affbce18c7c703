package approvals

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/tools"
)

// DefaultTimeout is how long an approval waits for a decision.
const DefaultTimeout = 2 * time.Minute

// Pipeline is what the approvals need of the chat pipeline; *bot.Router
// implements it.
type Pipeline interface {
	// AskDecision queues m, a message asking for a decision, and records
	// it in store before it can be delivered (bot.Router.AskDecision).
	AskDecision(ctx context.Context, store bot.DecisionMessages, m bot.OutboxMessage, kind, subject, role string)
	// EditDecisions shows the outcome in every message about subject.
	EditDecisions(ctx context.Context, store bot.DecisionMessages, kind, subject string, text func(bot.DecisionMessage) string)
	// AnswerPress acknowledges a button press, showing text to the presser.
	AnswerPress(ctx context.Context, in channels.Inbound, text string)
	// Notify queues a short system message to the chat in.
	Notify(ctx context.Context, in channels.Inbound, text string)
	// Resume lets the run parked in session go on, in chat for user.
	Resume(ctx context.Context, session string, chat channels.Address, user string)
	// SessionKey is the session the chat at addr talks in.
	SessionKey(ctx context.Context, addr channels.Address) string
}

// Options configures the approval service.
type Options struct {
	Store    Store
	Messages bot.DecisionMessages
	// Approvers may decide (platform:user_id). Empty: every call that needs
	// approval is refused.
	Approvers []string
	// Chat, when set (platform:chat_id), receives approval requests instead
	// of each approver's direct messages.
	Chat    string
	Timeout time.Duration // default DefaultTimeout
	Logger  *slog.Logger
}

// Service asks approvers to decide risky tool calls with buttons in the
// chat. It implements tools.Approver. Nothing waits for a decision: the
// run parks (tools.PendingError) and a decision on any replica resumes it.
// State lives in the store, so a request survives restarts.
type Service struct {
	o        Options
	chat     Pipeline
	expiries expiryWatch
}

var _ tools.Approver = (*Service)(nil)

// New returns the approval service; Attach it to the pipeline before the
// first run.
func New(o Options) *Service {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{o: o}
}

// Attach gives s the pipeline it posts through and resumes runs with. The
// service exists before the pipeline (the agents' tools need it, and the
// pipeline needs the agents), so the two are joined once both exist.
func (s *Service) Attach(p Pipeline) { s.chat = p }

// ButtonKind marks the approval buttons: their data is "ap:<id>:<choice>".
const ButtonKind = "ap"

// Button choices.
const (
	approvalPrefix = ButtonKind + ":"
	choiceOnce     = "o"
	choiceAlways   = "a"
	choiceDeny     = "d"
)

// AlwaysAllowed implements tools.Approver.
func (s *Service) AlwaysAllowed(ctx context.Context, tool, pattern string) (bool, error) {
	return s.o.Store.IsAlwaysAllowed(ctx, tool, pattern)
}

// Approve implements tools.Approver: it records the request (or finds the
// one an earlier attempt of the same step recorded), asks the approvers the
// first time, and returns the decision or a *tools.PendingError. An
// allowed-once decision is used up by the call it returns to; a repeat of
// the step finds it used and asks again.
func (s *Service) Approve(ctx context.Context, req tools.ApprovalRequest) (tools.Decision, error) {
	if len(s.o.Approvers) == 0 {
		return tools.Denied, tools.ErrNoApprover
	}
	c := req.Call
	for range 2 {
		now := time.Now()
		a, created, err := s.o.Store.CreateApproval(ctx, Approval{
			ID: bot.NewID(), Tool: req.Tool, Command: req.Command, Cwd: req.Cwd, Pattern: req.Pattern, Warnings: req.Warnings,
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
func (s *Service) announce(ctx context.Context, a Approval) {
	text := approvalText(a)
	row := []channels.Button{{Label: "Allow once", Data: approvalPrefix + a.ID + ":" + choiceOnce}}
	if len(a.Warnings) == 0 {
		row = append(row, channels.Button{Label: "Always allow", Data: approvalPrefix + a.ID + ":" + choiceAlways})
	}
	buttons := [][]channels.Button{append(row, channels.Button{Label: "Deny", Data: approvalPrefix + a.ID + ":" + choiceDeny})}
	for _, to := range bot.DecisionAddresses(s.o.Chat, s.o.Approvers) {
		s.chat.AskDecision(ctx, s.o.Messages, bot.OutboxMessage{To: to, Text: text, Buttons: buttons}, Kind, a.ID, "approver")
	}
	if a.Chat.Platform != "" && !s.isApproverChat(a.Chat) {
		what := "action"
		if a.Tool == "exec" {
			what = "command"
		}
		s.chat.AskDecision(ctx, s.o.Messages, bot.OutboxMessage{To: a.Chat,
			Text: "⏳ Waiting for an approver to allow this " + what + ":\n" + bot.CommandBlock(a.Command) +
				"\nI'll go on when they decide; /cancel withdraws it."}, Kind, a.ID, "requester")
	}
}

func (s *Service) isApproverChat(to channels.Address) bool {
	for _, a := range bot.DecisionAddresses(s.o.Chat, s.o.Approvers) {
		if a.Platform == to.Platform && a.ChatID == to.ChatID {
			return true
		}
	}
	return false
}

// expire turns a pending approval whose time is up into expired and edits
// its messages; when a press won the race, that decision stands.
func (s *Service) expire(ctx context.Context, a Approval) (tools.Decision, error) {
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
func (s *Service) Decide(ctx context.Context, in channels.Inbound, id, choice string) {
	presser := in.Identity()
	if !slices.Contains(s.o.Approvers, presser) {
		s.o.Logger.Warn("approval press by a non-approver", "approval_id", id, "presser", presser)
		s.chat.AnswerPress(ctx, in, "You may not decide this.")
		return
	}
	status, ok := map[string]string{choiceOnce: StatusAllowedOnce, choiceAlways: StatusAllowedAlways, choiceDeny: StatusDenied}[choice]
	if !ok {
		s.chat.AnswerPress(ctx, in, "This button is no longer active.")
		return
	}
	a, changed, err := s.DecideAs(ctx, id, status, presser)
	switch {
	case errors.Is(err, ErrDangerousAlways):
		s.o.Logger.Warn("always-allow press on a command flagged dangerous", "approval_id", id, "presser", presser)
		s.chat.AnswerPress(ctx, in, "\"Always allow\" is not offered for a command flagged dangerous; press Allow once or Deny.")
	case errors.Is(err, bot.ErrNotFound):
		s.chat.AnswerPress(ctx, in, "This request no longer exists.")
	case err != nil:
		s.chat.AnswerPress(ctx, in, "Could not record your decision (storage unavailable); press again in a moment.")
	case !changed:
		s.chat.AnswerPress(ctx, in, "Already decided: "+statusText(a))
	default:
		s.chat.AnswerPress(ctx, in, "Done: "+decisionOf(a.Status).String()+".")
	}
}

// DecideAs decides approval id with status (StatusAllowedOnce,
// StatusAllowedAlways or StatusDenied) on behalf of by — an approver's
// press, or the admin API — edits its messages and lets its run go on.
// The first decision wins: changed is false when it was decided before.
func (s *Service) DecideAs(ctx context.Context, id, status, by string) (Approval, bool, error) {
	if status != StatusAllowedOnce && status != StatusAllowedAlways && status != StatusDenied {
		return Approval{}, false, fmt.Errorf("%q is not a decision", status)
	}
	if status == StatusAllowedAlways {
		cur, err := s.o.Store.GetApproval(ctx, id)
		if err != nil && !errors.Is(err, bot.ErrNotFound) {
			s.o.Logger.Error("load approval", "approval_id", id, "err", err)
			return Approval{}, false, err
		}
		if err == nil && len(cur.Warnings) > 0 {
			return cur, false, ErrDangerousAlways
		}
	}
	a, changed, err := s.o.Store.DecideApproval(ctx, id, status, by)
	if err != nil {
		if !errors.Is(err, bot.ErrNotFound) {
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
func (s *Service) resume(ctx context.Context, a Approval) {
	if a.Session != "" {
		s.chat.Resume(ctx, a.Session, a.Chat, a.Requester)
	}
}

// ExpireDue expires the pending approvals whose time is up, edits their
// messages and resumes their runs (which tell the model nobody answered).
// Every replica may call it; each approval expires once. It asks the store
// only when an approval can be due: when one it knows of expires, and at
// least every approvalLookEvery (expiryWatch).
func (s *Service) ExpireDue(ctx context.Context) (int, error) {
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
func (s *Service) Cancel(ctx context.Context, session, by string) ([]Approval, error) {
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
func (s *Service) Resume(ctx context.Context, a Approval) { s.resume(ctx, a) }

// finish edits every message about a to show the outcome, without buttons.
func (s *Service) finish(ctx context.Context, a Approval) {
	if s.o.Messages == nil {
		return
	}
	s.chat.EditDecisions(ctx, s.o.Messages, Kind, a.ID, func(m bot.DecisionMessage) string {
		text := statusIcon(a.Status) + " " + statusText(a) + "\n" + bot.CommandBlock(a.Command) + warningLines(a)
		if m.Role == "requester" && a.Status == StatusExpired {
			text += "\nAsk again if it is still needed."
		}
		return text
	})
}

// Pending lists pending approvals for /approvals.
func (s *Service) Pending(ctx context.Context) ([]Approval, error) {
	return s.o.Store.PendingApprovals(ctx)
}

// IsApprover reports whether identity may decide approvals.
func (s *Service) IsApprover(identity string) bool { return slices.Contains(s.o.Approvers, identity) }
