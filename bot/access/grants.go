package access

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/quorum"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/tools"
)

// Grants decide who may use an MCP server's tools. The config names agents
// and people who may use a server without asking; everyone else needs a
// grant in Postgres, which an admin gives by pressing Approve on a grant
// request — or, when approvals.rules match the tool, the quorum of the
// rule's approvers. The request is filed by the tool call that lacked the
// grant; the call is refused meanwhile and works on the next call after
// approval.

// Grant subject kinds.
const (
	GrantAgent = "agent"
	GrantUser  = "user"
)

// KindGrantRequest names grant requests in decision messages.
const KindGrantRequest = "grant_request"

// GrantButton marks the grant-request buttons: "gr:<id>:<choice>".
const GrantButton = "gr"

// grantDeniedCooldown: a denied request is not asked again for a day.
const grantDeniedCooldown = 24 * time.Hour

// Grant lets an agent or a person use a server's tools.
type Grant struct {
	Server      string
	SubjectKind string // GrantAgent or GrantUser
	Subject     string // agent name or platform:user_id
	Allow, Deny []string
	GrantedBy   string
}

// permits reports whether the grant covers tool.
func (g Grant) permits(tool string) bool {
	return !slices.Contains(g.Deny, tool) && (len(g.Allow) == 0 || slices.Contains(g.Allow, tool))
}

// GrantRequest asks the admins for one tool of a server.
type GrantRequest struct {
	ID          string
	Server      string
	Tool        string
	Agent       string
	SubjectKind string
	Subject     string
	Chat        channels.Address // where it was asked; told the outcome
	Status      string           // StatusPending, StatusApproved, StatusDenied
	DecidedBy   string
	CreatedAt   time.Time

	// The rule it was asked under (approvals.rules), fixed when it was
	// opened so that every replica decides it alike.
	Quorum int // distinct people who must approve; 0 or 1: one
	// Approvers may vote (identities); empty: Options.Admins.
	Approvers   []string
	SelfApprove bool // the subject person's own vote counts
	// Votes so far, oldest first (choices StatusApproved, StatusDenied).
	Votes []quorum.Vote
}

// GrantStore keeps grants and grant requests (Postgres implements it).
type GrantStore interface {
	// GrantsFor returns the grants of server for these subjects.
	GrantsFor(ctx context.Context, server string, agent, user string) ([]Grant, error)
	// OpenGrantRequest stores r as pending unless the same subject has a
	// pending request for the tool, or one denied less than cooldown ago:
	// then it returns that one with created=false.
	OpenGrantRequest(ctx context.Context, r GrantRequest, cooldown time.Duration) (GrantRequest, bool, error)
	// GetGrantRequest returns the request, votes included, or an error
	// wrapping bot.ErrNotFound.
	GetGrantRequest(ctx context.Context, id string) (GrantRequest, error)
	// VoteGrantRequest records v on pending request id and, in the same
	// transaction with the request row locked, decides it when v is a deny
	// or the last approval its quorum needs; approving adds the tool to the
	// subject's grant in that transaction too, so of concurrent last votes
	// exactly one grants. It returns the request as it is afterwards.
	VoteGrantRequest(ctx context.Context, id string, v quorum.Vote) (GrantRequest, quorum.Outcome, error)
}

// CheckGrant decides whether call may use tool of server: ok, or why not
// for the model (the first time, with a request filed with the admins).
func (s *Service) CheckGrant(ctx context.Context, call tools.Call, server, tool string) (string, bool) {
	if s.o.GrantConfig != nil {
		agents, users := s.o.GrantConfig(server)
		if slices.Contains(agents, call.Agent) || (call.UserID != "" && slices.Contains(users, call.UserID)) {
			return "", true
		}
	}
	if s.o.Grants == nil {
		return fmt.Sprintf("mcp:%s is not granted to you (mcp.servers[].grants in the config)", server), false
	}
	grants, err := s.o.Grants.GrantsFor(ctx, server, call.Agent, call.UserID)
	if err != nil {
		s.o.Logger.Error("read tool grants", "server", server, "err", err)
		return "could not check access to this tool right now (storage unavailable); try again in a minute", false
	}
	permitted := false
	for _, g := range grants {
		if slices.Contains(g.Deny, tool) {
			return fmt.Sprintf("an admin denied %s of mcp:%s to %s", tool, server, g.Subject), false
		}
		permitted = permitted || g.permits(tool)
	}
	if permitted {
		return "", true
	}
	return s.requestGrant(ctx, call, server, tool), false
}

// requestGrant files a grant request (once) and says what happened.
func (s *Service) requestGrant(ctx context.Context, call tools.Call, server, tool string) string {
	kind, subject := GrantUser, call.UserID
	if subject == "" {
		kind, subject = GrantAgent, call.Agent // a scheduled job: nobody to grant it to but the agent
	}
	rule, ruled := quorum.First(s.o.Rules, s.actionOf(call, server, tool), s.o.Approvers)
	if !ruled {
		rule = quorum.Rule{Quorum: 1, Approvers: s.o.Admins, SelfApprove: true}
	}
	if len(rule.Approvers) == 0 && s.o.AdminChat == "" {
		return fmt.Sprintf("%s of mcp:%s is not granted to %s and no admins are configured to ask; the operator can "+
			"add it to mcp.servers[].grants", tool, server, subject)
	}
	open := GrantRequest{
		ID: bot.NewID(), Server: server, Tool: tool, Agent: call.Agent, SubjectKind: kind, Subject: subject,
		Chat:   channels.Address{Platform: call.Channel, ChatID: call.ChatID, ThreadID: call.ThreadID},
		Status: StatusPending, CreatedAt: time.Now(), Quorum: rule.Quorum, SelfApprove: rule.SelfApprove,
	}
	if ruled {
		// Without a rule the request keeps no approver list of its own:
		// the admins decide, as for requests made before rules.
		open.Approvers = slices.Clone(rule.Approvers)
	}
	req, created, err := s.o.Grants.OpenGrantRequest(ctx, open, grantDeniedCooldown)
	if err != nil {
		s.o.Logger.Error("open grant request", "server", server, "tool", tool, "err", err)
		return "could not ask the admins for access right now (storage unavailable); try again in a minute"
	}
	switch {
	case req.Status == StatusDenied:
		return fmt.Sprintf("an admin declined %s of mcp:%s for %s; do not ask again today", tool, server, subject)
	case !created:
		return fmt.Sprintf("access to %s of mcp:%s for %s is waiting for an admin; tell the person and try again after they decide",
			tool, server, subject)
	}
	s.o.Logger.Info("grant requested", "request_id", req.ID, "server", server, "tool", tool, "subject", subject, "quorum", req.Quorum)
	for _, to := range bot.DecisionAddresses(s.o.AdminChat, s.votersOf(req)) {
		s.chat.AskDecision(ctx, s.o.Messages, bot.OutboxMessage{To: to, Text: grantRequestText(req), Buttons: decisionButtons(GrantButton, req.ID)},
			KindGrantRequest, req.ID, "approver")
	}
	return fmt.Sprintf("%s of mcp:%s is not granted to %s yet; I asked the admins (request %s). Tell the person, and call the "+
		"tool again once an admin approves", tool, server, subject, req.ID)
}

// actionOf is what approvals.rules are matched against for a grant of
// tool of server: the tool as the registry names it, its groups and class
// (Options.ToolInfo), and the agent asking.
func (s *Service) actionOf(call tools.Call, server, tool string) quorum.Action {
	a := quorum.Action{Tool: tool, Groups: []string{"mcp", "mcp:" + server}, Agent: call.Agent}
	if s.o.ToolInfo != nil {
		a.Tool, a.Class, a.Groups = s.o.ToolInfo(server, tool)
	}
	return a
}
