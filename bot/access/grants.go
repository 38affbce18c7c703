package access

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/tools"
)

// Grants decide who may use an MCP server's tools. The config names agents
// and people who may use a server without asking; everyone else needs a
// grant in Postgres, which an admin gives by pressing Approve on a grant
// request. The request is filed by the tool call that lacked the grant;
// the call is refused meanwhile and works on the next call after approval.

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
}

// GrantStore keeps grants and grant requests (Postgres implements it).
type GrantStore interface {
	// GrantsFor returns the grants of server for these subjects.
	GrantsFor(ctx context.Context, server string, agent, user string) ([]Grant, error)
	// OpenGrantRequest stores r as pending unless the same subject has a
	// pending request for the tool, or one denied less than cooldown ago:
	// then it returns that one with created=false.
	OpenGrantRequest(ctx context.Context, r GrantRequest, cooldown time.Duration) (GrantRequest, bool, error)
	// DecideGrantRequest decides a pending request once; approving adds the
	// tool to the subject's grant in the same transaction. changed is false
	// when it was decided before.
	DecideGrantRequest(ctx context.Context, id, status, by string) (GrantRequest, bool, error)
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
	if len(s.o.Admins) == 0 && s.o.AdminChat == "" {
		return fmt.Sprintf("%s of mcp:%s is not granted to %s and no admins are configured to ask; the operator can "+
			"add it to mcp.servers[].grants", tool, server, subject)
	}
	req, created, err := s.o.Grants.OpenGrantRequest(ctx, GrantRequest{
		ID: bot.NewID(), Server: server, Tool: tool, Agent: call.Agent, SubjectKind: kind, Subject: subject,
		Chat:   channels.Address{Platform: call.Channel, ChatID: call.ChatID, ThreadID: call.ThreadID},
		Status: StatusPending, CreatedAt: time.Now(),
	}, grantDeniedCooldown)
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
	s.o.Logger.Info("grant requested", "request_id", req.ID, "server", server, "tool", tool, "subject", subject)
	text := fmt.Sprintf("🔑 *Tool access request*\n%s wants `mcp:%s` for %s — tools: %s", call.Agent, server, subject, tool)
	if req.Chat.Platform != "" {
		text += "\nAsked in " + req.Chat.String()
	}
	for _, to := range bot.DecisionAddresses(s.o.AdminChat, s.o.Admins) {
		s.chat.AskDecision(ctx, s.o.Messages, bot.OutboxMessage{To: to, Text: text, Buttons: decisionButtons(GrantButton, req.ID)},
			KindGrantRequest, req.ID, "approver")
	}
	return fmt.Sprintf("%s of mcp:%s is not granted to %s yet; I asked the admins (request %s). Tell the person, and call the "+
		"tool again once an admin approves", tool, server, subject, req.ID)
}

// DecideGrantPress handles a press on a grant-request button.
func (s *Service) DecideGrantPress(ctx context.Context, in channels.Inbound, id, choice string) {
	s.pressDecision(ctx, in, "grant", id, choice, s.o.Grants != nil, func(status string) (string, string, bool, error) {
		req, changed, err := s.o.Grants.DecideGrantRequest(ctx, id, status, in.Identity())
		if err != nil || !changed {
			if err != nil && !errors.Is(err, bot.ErrNotFound) {
				s.o.Logger.Error("decide grant request", "request_id", id, "err", err)
			}
			return req.Status, req.DecidedBy, false, err
		}
		s.grantDecided(ctx, req, in.Identity())
		return req.Status, req.DecidedBy, true, nil
	})
}

// grantDecided edits the admins' messages and tells the asking chat once.
func (s *Service) grantDecided(ctx context.Context, req GrantRequest, by string) {
	s.o.Logger.Info("grant request decided", "request_id", req.ID, "server", req.Server, "tool", req.Tool, "status", req.Status, "by", by)
	verb, tell := "Approved", fmt.Sprintf("✅ An admin granted %s of mcp:%s to %s; ask again and it will work.", req.Tool, req.Server, req.Subject)
	if req.Status == StatusDenied {
		verb, tell = "Denied", fmt.Sprintf("❌ An admin declined %s of mcp:%s for %s.", req.Tool, req.Server, req.Subject)
	}
	if s.o.Messages != nil {
		s.chat.EditDecisions(ctx, s.o.Messages, KindGrantRequest, req.ID, func(bot.DecisionMessage) string {
			return fmt.Sprintf("%s %s `mcp:%s` (%s) for %s — %s", decidedIcon(req.Status), verb, req.Server, req.Tool, req.Subject, by)
		})
	}
	if req.Chat.Platform != "" {
		s.chat.Send(ctx, bot.OutboxMessage{To: req.Chat, Text: tell})
	}
}
