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
	Waker    Waker // optional: wakes waiting runs on other replicas at once
	Outbox   Outbox
	Channels map[string]channels.Channel
	// Approvers may decide (platform:user_id). Empty: every call that needs
	// approval is refused.
	Approvers []string
	// Chat, when set (platform:chat_id), receives approval requests instead
	// of each approver's direct messages.
	Chat    string
	Timeout time.Duration // default DefaultApprovalTimeout
	Poll    time.Duration // how often a waiter re-reads the store (default 1s)
	Nudge   func()
	Scrub   func(string) string
	Logger  *slog.Logger
}

// Approvals asks approvers to decide risky tool calls with buttons in the
// chat. It implements tools.Approver. State lives in the store, so a
// request survives restarts and a press on any replica decides it.
type Approvals struct {
	o    ApprovalOptions
	post *poster
}

var _ tools.Approver = (*Approvals)(nil)

// NewApprovals returns the approval service.
func NewApprovals(o ApprovalOptions) *Approvals {
	if o.Timeout <= 0 {
		o.Timeout = DefaultApprovalTimeout
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Scrub == nil {
		o.Scrub = func(s string) string { return s }
	}
	return &Approvals{o: o, post: &poster{outbox: o.Outbox, channels: o.Channels, nudge: o.Nudge, scrub: o.Scrub, log: o.Logger}}
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
// one a run before a restart recorded), asks the approvers, and waits.
func (s *Approvals) Approve(ctx context.Context, req tools.ApprovalRequest) (tools.Decision, error) {
	if len(s.o.Approvers) == 0 {
		return tools.Denied, tools.ErrNoApprover
	}
	now := time.Now()
	c := req.Call
	a, created, err := s.o.Store.CreateApproval(ctx, Approval{
		ID: newID(), Tool: req.Tool, Command: req.Command, Cwd: req.Cwd, Pattern: req.Pattern,
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
	return s.wait(ctx, a)
}

// announce posts the request to the approvers and a "waiting" note in the
// requester's chat, remembering the messages to edit them later.
func (s *Approvals) announce(ctx context.Context, a Approval) {
	text := approvalText(a)
	buttons := [][]channels.Button{{
		{Label: "Allow once", Data: approvalPrefix + a.ID + ":" + choiceOnce},
		{Label: "Always allow", Data: approvalPrefix + a.ID + ":" + choiceAlways},
		{Label: "Deny", Data: approvalPrefix + a.ID + ":" + choiceDeny},
	}}
	for _, to := range approverAddresses(s.o.Chat, s.o.Approvers) {
		id := s.post.send(ctx, OutboxMessage{To: to, Text: text, Buttons: buttons})
		s.remember(ctx, KindApproval, a.ID, id, "approver")
	}
	if a.Chat.Platform != "" && !s.isApproverChat(a.Chat) {
		what := "action"
		if a.Tool == "exec" {
			what = "command"
		}
		id := s.post.send(ctx, OutboxMessage{To: a.Chat,
			Text: "⏳ Waiting for an approver to allow this " + what + ":\n" + codeBlock(a.Command)})
		s.remember(ctx, KindApproval, a.ID, id, "requester")
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

func (s *Approvals) remember(ctx context.Context, kind, subject string, outboxID int64, role string) {
	if outboxID == 0 || s.o.Messages == nil {
		return
	}
	if err := s.o.Messages.AddDecisionMessage(ctx, kind, subject, outboxID, role); err != nil {
		s.o.Logger.Warn("remember decision message", "kind", kind, "id", subject, "err", err)
	}
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
	fmt.Fprintf(&b, "🔐 *Approval needed* — agent %s wants to run `%s`", a.Agent, a.Tool)
	fmt.Fprintf(&b, "\nAsked by %s in %s", a.Requester, a.Chat.String())
	if a.Cwd != "" {
		fmt.Fprintf(&b, ", in folder %s", a.Cwd)
	}
	b.WriteString(":\n" + codeBlock(a.Command))
	fmt.Fprintf(&b, "\nExpires at %s UTC if nobody decides.", a.ExpiresAt.UTC().Format("15:04:05"))
	return b.String()
}

// wait blocks until a is decided (by a press on any replica) or expires.
func (s *Approvals) wait(ctx context.Context, a Approval) (tools.Decision, error) {
	var wake <-chan struct{}
	if s.o.Waker != nil {
		ch, stop, err := s.o.Waker.Subscribe(ctx, "approval:"+a.ID)
		if err != nil {
			s.o.Logger.Warn("approval wake-ups unavailable; polling", "err", err)
		} else {
			defer stop()
			wake = ch
		}
	}
	poll := time.NewTicker(s.o.Poll)
	defer poll.Stop()
	for {
		if a.Status != StatusPending {
			return decisionOf(a.Status), nil
		}
		left := time.Until(a.ExpiresAt)
		if left <= 0 {
			return s.expire(ctx, a)
		}
		select {
		case <-ctx.Done():
			return tools.Denied, ctx.Err()
		case <-wake:
		case <-poll.C:
		case <-time.After(left):
		}
		fresh, err := s.o.Store.GetApproval(ctx, a.ID)
		if err != nil {
			s.o.Logger.Warn("re-read approval", "approval_id", a.ID, "err", err)
			continue
		}
		a = fresh
	}
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

// Decide handles a press on an approval button: only approvers decide,
// the first valid press wins, every press is answered.
func (s *Approvals) Decide(ctx context.Context, in channels.Inbound, id, choice string) {
	presser := in.Identity()
	if !slices.Contains(s.o.Approvers, presser) {
		s.o.Logger.Warn("approval press by a non-approver", "approval_id", id, "presser", presser)
		s.post.answer(ctx, in, "You may not decide this.")
		return
	}
	status, ok := map[string]string{choiceOnce: StatusAllowedOnce, choiceAlways: StatusAllowedAlways, choiceDeny: StatusDenied}[choice]
	if !ok {
		s.post.answer(ctx, in, "This button is no longer active.")
		return
	}
	a, changed, err := s.o.Store.DecideApproval(ctx, id, status, presser)
	switch {
	case errors.Is(err, ErrNotFound):
		s.post.answer(ctx, in, "This request no longer exists.")
		return
	case err != nil:
		s.o.Logger.Error("decide approval", "approval_id", id, "err", err)
		s.post.answer(ctx, in, "Could not record your decision (storage unavailable); press again in a moment.")
		return
	case !changed:
		s.post.answer(ctx, in, "Already decided: "+statusText(a))
		return
	}
	s.o.Logger.Info("approval decided", "approval_id", id, "status", a.Status, "by", presser)
	if a.Status == StatusAllowedAlways {
		if err := s.o.Store.AllowAlways(ctx, a.Tool, a.Pattern, presser); err != nil {
			s.o.Logger.Error("store always-allow pattern", "approval_id", id, "err", err)
		}
	}
	s.post.answer(ctx, in, "Done: "+decisionOf(a.Status).String()+".")
	s.finish(ctx, a)
	if s.o.Waker != nil {
		if err := s.o.Waker.Wake(ctx, "approval:"+a.ID); err != nil {
			s.o.Logger.Warn("wake approval waiter", "approval_id", id, "err", err)
		}
	}
}

// finish edits every message about a to show the outcome, without buttons.
func (s *Approvals) finish(ctx context.Context, a Approval) {
	if s.o.Messages == nil {
		return
	}
	msgs, err := s.o.Messages.DecisionMessagesOf(ctx, KindApproval, a.ID)
	if err != nil {
		s.o.Logger.Warn("load decision messages", "approval_id", a.ID, "err", err)
		return
	}
	for _, m := range msgs {
		text := statusIcon(a.Status) + " " + statusText(a) + "\n" + codeBlock(a.Command)
		if m.Role == "requester" && a.Status == StatusExpired {
			text += "\nAsk again if it is still needed."
		}
		s.post.edit(ctx, m.To, m.PlatformMessageID, text)
	}
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
	}
	return fmt.Sprintf("%s by %s", capitalize(decisionOf(a.Status).String()), a.DecidedBy)
}

func statusIcon(status string) string {
	switch status {
	case StatusAllowedOnce, StatusAllowedAlways, StatusApproved:
		return "✅"
	case StatusExpired:
		return "⌛"
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
