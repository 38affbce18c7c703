package access

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
)

// Request statuses (access and grant requests).
const (
	StatusPending  = "pending"
	StatusApproved = "approved"
	StatusDenied   = "denied"
)

// KindRequest names access requests in decision messages and the audit
// log.
const KindRequest = "access_request"

// RequestButton marks the access-request buttons: "ar:<id>:<choice>".
const RequestButton = "ar"

// ErrTooManyPending is returned when the cap on pending access requests of
// a platform is reached.
var ErrTooManyPending = errors.New("too many pending access requests")

// Access request limits: at most this many pending per platform (a flood
// of strangers cannot flood the admins), and a denied person is not asked
// about again for a day.
const (
	maxPendingRequests = 20
	deniedCooldown     = 24 * time.Hour
)

// Request is an unknown person's request to talk to the agents.
type Request struct {
	ID          string
	Identity    string // platform:user_id
	DisplayName string
	Chat        channels.Address // where they wrote from (to tell them the outcome)
	Status      string           // pending, approved, denied
	DecidedBy   string
	CreatedAt   time.Time
	DecidedAt   time.Time
}

// RequestStore keeps access requests durable. Postgres implements it.
type RequestStore interface {
	// OpenAccessRequest stores r as pending unless the identity has a
	// pending request, or a denied one newer than cooldown; then it returns
	// that one with created=false. When the platform of r already has
	// maxPending pending requests it returns ErrTooManyPending.
	OpenAccessRequest(ctx context.Context, r Request, maxPending int, cooldown time.Duration) (Request, bool, error)
	// GetAccessRequest returns the request or bot.ErrNotFound.
	GetAccessRequest(ctx context.Context, id string) (Request, error)
	// DecideAccessRequest atomically moves a pending request to status
	// (approved or denied); approval also allows the identity — all with
	// the audit record, in one transaction.
	DecideAccessRequest(ctx context.Context, id, status, by string) (Request, bool, error)
	// Revoke disallows identity (audited) and reports whether it was allowed.
	Revoke(ctx context.Context, identity, by string) (bool, error)
}

// RequestAccess handles a message from an unknown person in request mode
// (bot.Router.HandleUnknown): one request per person, admins asked once
// with buttons, the person told once.
func (s *Service) RequestAccess(ctx context.Context, in channels.Inbound) {
	id := in.Identity()
	store := s.o.Requests
	if len(s.o.Admins) == 0 || store == nil {
		s.o.Logger.Warn("access request impossible: no admins configured", "user", id)
		s.chat.NoticeOnce(ctx, in, "notice:access:"+id, fmt.Sprintf(
			"Sorry, you don't have access to this bot, and no admins are configured to ask. "+
				"The operator can allow you with access.allow: `%s`.", id))
		return
	}
	req, created, err := store.OpenAccessRequest(ctx, Request{
		ID: bot.NewID(), Identity: id, DisplayName: in.UserName, Chat: in.Address(),
		Status: StatusPending, CreatedAt: time.Now(),
	}, maxPendingRequests, deniedCooldown)
	switch {
	case errors.Is(err, ErrTooManyPending):
		s.o.Logger.Warn("access request refused: too many pending", "user", id, "platform", in.Platform)
		s.chat.NoticeOnce(ctx, in, "notice:access-full:"+id,
			"Sorry, too many access requests are waiting for the admins right now. Please try again later.")
		return
	case err != nil:
		s.o.Logger.Error("open access request", "user", id, "err", err)
		s.chat.Notify(ctx, in, "I can't file your access request right now (storage unavailable). Please try again in a minute.")
		return
	case !created:
		// Pending or recently denied: stay quiet, do not spam the admins.
		s.o.Logger.Debug("access request already open", "user", id, "request_id", req.ID, "status", req.Status)
		return
	}
	s.o.Logger.Info("access requested", "user", id, "request_id", req.ID)
	text := fmt.Sprintf("🙋 *Access request*\n%s (`%s`) wants to talk to the agents. They wrote in %s.",
		escapeName(in.UserName), id, in.Address().String())
	for _, to := range bot.DecisionAddresses(s.o.AdminChat, s.o.Admins) {
		s.chat.AskDecision(ctx, s.o.Messages, bot.OutboxMessage{To: to, Text: text, Buttons: decisionButtons(RequestButton, req.ID)},
			KindRequest, req.ID, "approver")
	}
	s.chat.Notify(ctx, in, "I don't know you yet, so I've asked an admin to let you in. I'll tell you here when they decide.")
}

// DecideRequestPress handles a press on an access-request button.
func (s *Service) DecideRequestPress(ctx context.Context, in channels.Inbound, id, choice string) {
	s.pressDecision(ctx, in, "access request", id, choice, s.o.Requests != nil, func(status string) (string, string, bool, error) {
		req, changed, err := s.DecideAccessAs(ctx, id, status, in.Identity())
		return req.Status, req.DecidedBy, changed, err
	})
}

// DecideAccessAs decides access request id (StatusApproved or
// StatusDenied) on behalf of by — an admin's press, or the admin API —
// edits its messages and tells the person once. The first decision wins.
func (s *Service) DecideAccessAs(ctx context.Context, id, status, by string) (Request, bool, error) {
	if s.o.Requests == nil {
		return Request{}, false, bot.ErrNotFound
	}
	req, changed, err := s.o.Requests.DecideAccessRequest(ctx, id, status, by)
	if err != nil || !changed {
		if err != nil && !errors.Is(err, bot.ErrNotFound) {
			s.o.Logger.Error("decide access request", "request_id", id, "err", err)
		}
		return req, false, err
	}
	s.o.Logger.Info("access request decided", "request_id", id, "user", req.Identity, "status", req.Status, "by", by)
	verb := "Approved"
	tell := "Good news: an admin let you in. Go ahead and write to me."
	if req.Status == StatusDenied {
		verb = "Denied"
		tell = "Sorry, an admin declined your access request."
	}
	if s.o.Messages != nil {
		s.chat.EditDecisions(ctx, s.o.Messages, KindRequest, req.ID, func(bot.DecisionMessage) string {
			return fmt.Sprintf("%s %s access for %s (`%s`) — %s", decidedIcon(req.Status), verb, escapeName(req.DisplayName), req.Identity, by)
		})
	}
	s.chat.Send(ctx, bot.OutboxMessage{To: req.Chat, Text: tell})
	return req, true, nil
}

// Commands are the access feature's chat commands: /revoke.
func Commands(s *Service) []bot.Command {
	return []bot.Command{{Name: "revoke", Help: "revoke someone's access: /revoke platform:user_id (admins only)",
		Run: func(ctx context.Context, _ bot.Host, in channels.Inbound, args string) string {
			return s.revoke(ctx, in, args)
		}}}
}

// ErrAllowedByConfig refuses to revoke an identity the configuration
// allows (admins, access.allow): only the configuration can.
var ErrAllowedByConfig = errors.New("allowed by the configuration (admins or access.allow); remove it there")

// RevokeAs takes identity's access away on behalf of by (an admin), audited,
// and reports whether it had access: ErrAllowedByConfig for an identity
// the configuration allows, bot.ErrNotFound when access requests are not
// set up.
func (s *Service) RevokeAs(ctx context.Context, identity, by string) (bool, error) {
	if slices.Contains(s.o.Allow, identity) || slices.Contains(s.o.Admins, identity) {
		return false, ErrAllowedByConfig
	}
	if s.o.Requests == nil {
		return false, bot.ErrNotFound
	}
	was, err := s.o.Requests.Revoke(ctx, identity, by)
	if err == nil {
		s.o.Logger.Info("access revoked", "user", identity, "by", by, "was_allowed", was)
	}
	return was, err
}

// revoke answers /revoke platform:user_id (admins only).
func (s *Service) revoke(ctx context.Context, in channels.Inbound, args string) string {
	if !s.isAdmin(in.Identity()) {
		return "Only admins can revoke access."
	}
	if _, err := channels.ParseAddress(args); err != nil || args == "" {
		return "Usage: /revoke platform:user_id (for example /revoke telegram:42)."
	}
	was, err := s.RevokeAs(ctx, args, in.Identity())
	switch {
	case errors.Is(err, ErrAllowedByConfig):
		return fmt.Sprintf("`%s` is allowed by the configuration (admins or access.allow); remove it there.", args)
	case errors.Is(err, bot.ErrNotFound):
		return "Access requests are not set up."
	}
	if err != nil {
		s.o.Logger.Error("revoke", "user", args, "err", err)
		return "Could not revoke right now (storage unavailable); try again in a minute."
	}
	if !was {
		return fmt.Sprintf("`%s` did not have access.", args)
	}
	return fmt.Sprintf("Revoked: `%s` can no longer talk to the agents.", args)
}

// escapeName keeps a display name from injecting Markdown into admin
// messages: names are chosen by strangers.
func escapeName(s string) string {
	out := make([]rune, 0, len(s))
	for _, c := range s {
		switch c {
		case '*', '_', '`', '[', ']', '(', ')', '~', '>', '#', '|', '\\':
			out = append(out, '\\', c)
		case '\n', '\r':
			out = append(out, ' ')
		default:
			out = append(out, c)
		}
	}
	if len(out) > 64 {
		out = append(out[:64], '…')
	}
	return string(out)
}
