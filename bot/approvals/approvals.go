package approvals

import (
	"context"
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
	// ShowProgress edits every message about subject to what render
	// returns, buttons included, while it is still undecided.
	ShowProgress(ctx context.Context, store bot.DecisionMessages, kind, subject string, render func(bot.DecisionMessage) (string, [][]channels.Button))
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
	// Rules decide, per tool, class or agent, how many people must allow
	// and who (first match wins; no match: one of Approvers).
	Rules []Rule
	// People maps identities to the person they belong to, so that one
	// person with accounts on several platforms votes once; an identity
	// not listed is a person of its own.
	People map[string]string
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
	expiries bot.ExpiryWatch
	deciders map[string]bool // everyone some rule lets vote, for /approvals and /cancel
	// escalates is true when some rule escalates, so EscalateDue looks.
	escalates bool
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
	s := &Service{o: o, deciders: map[string]bool{}, expiries: bot.ExpiryWatch{Every: approvalLookEvery}}
	for _, id := range o.Approvers {
		s.deciders[id] = true
	}
	for _, r := range o.Rules {
		for _, id := range slices.Concat(r.Approvers, r.EscalateTo) {
			s.deciders[id] = true
		}
		s.escalates = s.escalates || (r.EscalateAfter > 0 && len(r.EscalateTo) > 0)
	}
	return s
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
	rule := s.ruleFor(req)
	if len(rule.Approvers) == 0 {
		return tools.Denied, tools.ErrNoApprover
	}
	c := req.Call
	for range 2 {
		now := time.Now()
		a, created, err := s.o.Store.CreateApproval(ctx, rule.apply(Approval{
			ID: bot.NewID(), Tool: req.Tool, Command: req.Command, Cwd: req.Cwd, Pattern: req.Pattern, Warnings: req.Warnings, Verb: req.Verb,
			Agent: c.Agent, Session: c.Session, ToolCallID: c.ToolCallID, Requester: c.UserID,
			Chat:   channels.Address{Platform: c.Channel, ChatID: c.ChatID, ThreadID: c.ThreadID},
			Status: StatusPending, CreatedAt: now, ExpiresAt: now.Add(s.o.Timeout),
		}))
		if err != nil {
			return tools.Denied, fmt.Errorf("record approval: %w", err)
		}
		if created {
			s.o.Logger.Info("approval requested", "approval_id", a.ID, "tool", a.Tool, "session", a.Session)
			s.announce(ctx, a)
		}
		switch a.Status {
		case StatusPending:
			s.expiries.Note(a.ExpiresAt)
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
	for _, to := range bot.DecisionAddresses(s.o.Chat, s.approversOf(a)) {
		s.chat.AskDecision(ctx, s.o.Messages, bot.OutboxMessage{To: to, Text: approvalText(a), Buttons: buttonsFor(a)}, Kind, a.ID, "approver")
	}
	if a.Chat.Platform != "" && !s.isApproverChat(a, a.Chat) {
		s.chat.AskDecision(ctx, s.o.Messages, bot.OutboxMessage{To: a.Chat, Text: requesterText(a)}, Kind, a.ID, "requester")
	}
}

// buttonsFor are a's buttons: no "Always allow" for a command flagged
// dangerous or a request with a verb, whose buttons say it.
func buttonsFor(a Approval) [][]channels.Button {
	w := wordsFor(a.Verb)
	row := []channels.Button{{Label: w.allow, Data: approvalPrefix + a.ID + ":" + choiceOnce}}
	if len(a.Warnings) == 0 && a.Verb == "" {
		row = append(row, channels.Button{Label: "Always allow", Data: approvalPrefix + a.ID + ":" + choiceAlways})
	}
	return [][]channels.Button{append(row, channels.Button{Label: w.deny, Data: approvalPrefix + a.ID + ":" + choiceDeny})}
}

// isApproverChat reports whether a's approvers are asked in the chat at to.
func (s *Service) isApproverChat(a Approval, to channels.Address) bool {
	for _, at := range bot.DecisionAddresses(s.o.Chat, s.approversOf(a)) {
		if at.Platform == to.Platform && at.ChatID == to.ChatID {
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
	if !s.expiries.Begin(now) {
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
	s.expiries.Looked(now, next)
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
	s.chat.EditDecisions(ctx, s.o.Messages, Kind, a.ID, func(m bot.DecisionMessage) string { return outcomeText(a, m.Role) })
}

// Pending lists pending approvals for /approvals.
func (s *Service) Pending(ctx context.Context) ([]Approval, error) {
	return s.o.Store.PendingApprovals(ctx)
}

// IsApprover reports whether identity may decide some approvals: it is
// an approver, or named by a rule (as approver or escalation target).
func (s *Service) IsApprover(identity string) bool { return s.deciders[identity] }
