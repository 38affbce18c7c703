package access

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/quorum"
	"github.com/switchboard-chat/switchboard/channels"
)

// Pipeline is what the access feature needs of the chat pipeline;
// *bot.Router implements it.
type Pipeline interface {
	// Send queues m for delivery.
	Send(ctx context.Context, m bot.OutboxMessage)
	// Notify queues a short system message to the chat in.
	Notify(ctx context.Context, in channels.Inbound, text string)
	// NoticeOnce notifies in's chat unless the notice under key was given
	// lately.
	NoticeOnce(ctx context.Context, in channels.Inbound, key, text string)
	// AnswerPress acknowledges a button press, showing text to the presser.
	AnswerPress(ctx context.Context, in channels.Inbound, text string)
	// AskDecision queues m, a message asking for a decision, and records
	// it in store before it can be delivered.
	AskDecision(ctx context.Context, store bot.DecisionMessages, m bot.OutboxMessage, kind, subject, role string)
	// EditDecisions shows the outcome in every message about subject.
	EditDecisions(ctx context.Context, store bot.DecisionMessages, kind, subject string, text func(bot.DecisionMessage) string)
	// ShowProgress edits every message about subject to what render
	// returns, buttons included, while it is still undecided.
	ShowProgress(ctx context.Context, store bot.DecisionMessages, kind, subject string, render func(bot.DecisionMessage) (string, [][]channels.Button))
}

// Options configures the access feature.
type Options struct {
	// Requests keeps access requests; nil: request mode cannot ask anyone.
	Requests RequestStore
	// Grants keeps MCP tool grants and grant requests; nil: only the
	// config's grants (GrantConfig) count.
	Grants GrantStore
	// GrantConfig returns the agents and people the config lets use server
	// without asking.
	GrantConfig func(server string) (agents, users []string)
	Messages    bot.DecisionMessages
	// Admins decide requests (platform:user_id); Allow are the identities
	// the config allows from the start (they cannot be revoked in chat).
	Admins []string
	Allow  []string
	// AdminChat (platform:chat_id), when set, receives the requests
	// instead of each admin's direct messages.
	AdminChat string
	// Rules (approvals.rules) decide, per MCP tool, its groups and class,
	// or agent, how many people must approve a grant request and who
	// (first match wins). No match: one admin.
	Rules []quorum.Rule
	// Approvers (approvals.approvers) vote under a rule that names none,
	// as they do on approvals.
	Approvers []string
	// People maps identities to the person they belong to, so that one
	// person votes once and cannot approve their own request from a
	// second account.
	People quorum.People
	// ToolInfo names an MCP server's tool as rules name it (its registry
	// name), with its side-effect class and groups; nil: the server's own
	// tool name, no class, groups mcp and mcp:<server>.
	ToolInfo func(server, tool string) (name, class string, groups []string)
	Logger   *slog.Logger
}

// Service decides access requests and tool grants.
type Service struct {
	o    Options
	chat Pipeline
}

// New returns the access feature; Attach it to the pipeline before the
// first message.
func New(o Options) *Service {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{o: o}
}

// Attach gives s the pipeline it posts through. The service exists before
// the pipeline (the MCP tools check grants with it, and the pipeline needs
// the agents), so the two are joined once both exist.
func (s *Service) Attach(p Pipeline) { s.chat = p }

// isAdmin reports whether identity is a configured admin.
func (s *Service) isAdmin(identity string) bool { return slices.Contains(s.o.Admins, identity) }

// Approve / Deny button choices of access and grant requests.
const (
	choiceApprove = "a"
	choiceReject  = "d"
)

// decisionButtons are the Approve and Deny buttons of request id, for
// buttons of kind.
func decisionButtons(kind, id string) [][]channels.Button {
	return [][]channels.Button{{
		{Label: "Approve", Data: kind + ":" + id + ":" + choiceApprove},
		{Label: "Deny", Data: kind + ":" + id + ":" + choiceReject},
	}}
}

// pressDecision handles an Approve / Deny press on something only admins
// decide (access requests): a non-admin or an unknown choice
// changes nothing; every press is answered.
func (s *Service) pressDecision(ctx context.Context, in channels.Inbound, what, id, choice string, on bool,
	decide func(status string) (now, by string, changed bool, err error)) {
	presser := in.Identity()
	if !s.isAdmin(presser) {
		s.o.Logger.Warn(what+" press by a non-admin", "request_id", id, "presser", presser)
		s.chat.AnswerPress(ctx, in, "You may not decide this.")
		return
	}
	status, ok := map[string]string{choiceApprove: StatusApproved, choiceReject: StatusDenied}[choice]
	if !ok || !on {
		s.chat.AnswerPress(ctx, in, "This button is no longer active.")
		return
	}
	now, by, changed, err := decide(status)
	switch {
	case errors.Is(err, bot.ErrNotFound):
		s.chat.AnswerPress(ctx, in, "This request no longer exists.")
	case err != nil:
		s.chat.AnswerPress(ctx, in, "Could not record your decision (storage unavailable); press again in a moment.")
	case !changed:
		s.chat.AnswerPress(ctx, in, fmt.Sprintf("Already decided: %s by %s.", now, by))
	case now == StatusDenied:
		s.chat.AnswerPress(ctx, in, "Denied.")
	default:
		s.chat.AnswerPress(ctx, in, "Approved.")
	}
}

// decidedIcon marks an outcome in the admins' edited messages.
func decidedIcon(status string) string {
	if status == StatusApproved {
		return "✅"
	}
	return "⛔"
}
