package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
)

// Access request limits: at most this many pending per platform (a flood
// of strangers cannot flood the admins), and a denied person is not asked
// about again for a day.
const (
	maxPendingAccessRequests = 20
	accessDeniedCooldown     = 24 * time.Hour
)

// Access-request button choices.
const (
	choiceApprove = "a"
	choiceReject  = "d"
)

// requestAccess handles a message from an unknown person in request mode:
// one request per person, admins asked once with buttons, the person told
// once.
func (r *Router) requestAccess(ctx context.Context, in channels.Inbound) {
	id := in.Identity()
	admins := r.opts.Access.Admins
	store := r.opts.AccessRequests
	if len(admins) == 0 || store == nil {
		r.log.Warn("access request impossible: no admins configured", "user", id)
		r.noticeOnce(ctx, in, "notice:access:"+id, fmt.Sprintf(
			"Sorry, you don't have access to this bot, and no admins are configured to ask. "+
				"The operator can allow you with access.allow: `%s`.", id))
		return
	}
	req, created, err := store.OpenAccessRequest(ctx, AccessRequest{
		ID: newID(), Identity: id, DisplayName: in.UserName, Chat: in.Address(),
		Status: StatusPending, CreatedAt: time.Now(),
	}, maxPendingAccessRequests, accessDeniedCooldown)
	switch {
	case errors.Is(err, ErrTooManyPending):
		r.log.Warn("access request refused: too many pending", "user", id, "platform", in.Platform)
		r.noticeOnce(ctx, in, "notice:access-full:"+id,
			"Sorry, too many access requests are waiting for the admins right now. Please try again later.")
		return
	case err != nil:
		r.log.Error("open access request", "user", id, "err", err)
		r.notify(ctx, in, "I can't file your access request right now (storage unavailable). Please try again in a minute.")
		return
	case !created:
		// Pending or recently denied: stay quiet, do not spam the admins.
		r.log.Debug("access request already open", "user", id, "request_id", req.ID, "status", req.Status)
		return
	}
	r.log.Info("access requested", "user", id, "request_id", req.ID)
	text := fmt.Sprintf("🙋 *Access request*\n%s (`%s`) wants to talk to the agents. They wrote in %s.",
		escapeName(in.UserName), id, in.Address().String())
	buttons := [][]channels.Button{{
		{Label: "Approve", Data: buttonAccess + ":" + req.ID + ":" + choiceApprove},
		{Label: "Deny", Data: buttonAccess + ":" + req.ID + ":" + choiceReject},
	}}
	for _, to := range approverAddresses(r.opts.AdminChat, admins) {
		r.out.askDecision(ctx, r.opts.DecisionMessages, OutboxMessage{To: to, Text: text, Buttons: buttons}, KindAccessRequest, req.ID, "approver")
	}
	r.notify(ctx, in, "I don't know you yet, so I've asked an admin to let you in. I'll tell you here when they decide.")
}

// decideAccess handles a press on an access-request button.
func (r *Router) decideAccess(ctx context.Context, in channels.Inbound, id, choice string) {
	r.pressDecision(ctx, in, "access request", id, choice, r.opts.AccessRequests != nil, func(status string) (string, string, bool, error) {
		req, changed, err := r.DecideAccessAs(ctx, id, status, in.Identity())
		return req.Status, req.DecidedBy, changed, err
	})
}

// pressDecision handles an Approve / Deny press on something only admins
// decide (access and grant requests): a non-admin or an unknown choice
// changes nothing; every press is answered.
func (r *Router) pressDecision(ctx context.Context, in channels.Inbound, what, id, choice string, on bool,
	decide func(status string) (now, by string, changed bool, err error)) {
	presser := in.Identity()
	if !r.opts.Access.IsAdmin(presser) {
		r.log.Warn(what+" press by a non-admin", "request_id", id, "presser", presser)
		r.out.answer(ctx, in, "You may not decide this.")
		return
	}
	status, ok := map[string]string{choiceApprove: StatusApproved, choiceReject: StatusDenied}[choice]
	if !ok || !on {
		r.out.answer(ctx, in, "This button is no longer active.")
		return
	}
	now, by, changed, err := decide(status)
	switch {
	case errors.Is(err, ErrNotFound):
		r.out.answer(ctx, in, "This request no longer exists.")
	case err != nil:
		r.out.answer(ctx, in, "Could not record your decision (storage unavailable); press again in a moment.")
	case !changed:
		r.out.answer(ctx, in, fmt.Sprintf("Already decided: %s by %s.", now, by))
	case now == StatusDenied:
		r.out.answer(ctx, in, "Denied.")
	default:
		r.out.answer(ctx, in, "Approved.")
	}
}

// DecideAccessAs decides access request id (StatusApproved or
// StatusDenied) on behalf of by — an admin's press, or the admin API —
// edits its messages and tells the person once. The first decision wins.
func (r *Router) DecideAccessAs(ctx context.Context, id, status, by string) (AccessRequest, bool, error) {
	if r.opts.AccessRequests == nil {
		return AccessRequest{}, false, ErrNotFound
	}
	req, changed, err := r.opts.AccessRequests.DecideAccessRequest(ctx, id, status, by)
	if err != nil || !changed {
		if err != nil && !errors.Is(err, ErrNotFound) {
			r.log.Error("decide access request", "request_id", id, "err", err)
		}
		return req, false, err
	}
	r.log.Info("access request decided", "request_id", id, "user", req.Identity, "status", req.Status, "by", by)
	verb := "Approved"
	tell := "Good news: an admin let you in. Go ahead and write to me."
	if req.Status == StatusDenied {
		verb = "Denied"
		tell = "Sorry, an admin declined your access request."
	}
	if r.opts.DecisionMessages != nil {
		r.out.editDecisions(ctx, r.opts.DecisionMessages, KindAccessRequest, req.ID, func(DecisionMessage) string {
			return fmt.Sprintf("%s %s access for %s (`%s`) — %s", statusIcon(req.Status), verb, escapeName(req.DisplayName), req.Identity, by)
		})
	}
	r.send(ctx, OutboxMessage{To: req.Chat, Text: tell})
	return req, true, nil
}

// cmdRevoke: /revoke platform:user_id (admins only).
func (r *Router) cmdRevoke(ctx context.Context, in channels.Inbound, args string) string {
	if !r.opts.Access.IsAdmin(in.Identity()) {
		return "Only admins can revoke access."
	}
	if _, err := channels.ParseAddress(args); err != nil || args == "" {
		return "Usage: /revoke platform:user_id (for example /revoke telegram:42)."
	}
	if slices.Contains(r.opts.Access.Allow, args) || slices.Contains(r.opts.Access.Admins, args) {
		return fmt.Sprintf("`%s` is allowed by the configuration (admins or access.allow); remove it there.", args)
	}
	if r.opts.AccessRequests == nil {
		return "Access requests are not set up."
	}
	was, err := r.opts.AccessRequests.Revoke(ctx, args, in.Identity())
	if err != nil {
		r.log.Error("revoke", "user", args, "err", err)
		return "Could not revoke right now (storage unavailable); try again in a minute."
	}
	if !was {
		return fmt.Sprintf("`%s` did not have access.", args)
	}
	return fmt.Sprintf("Revoked: `%s` can no longer talk to the agents.", args)
}

// noticeOnce sends text unless the notice under key was given in the last
// half day.
func (r *Router) noticeOnce(ctx context.Context, in channels.Inbound, key, text string) {
	if r.shouldNotice(ctx, key, DedupeTTL/4) {
		r.notify(ctx, in, text)
	}
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
