package console

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/access"
	"github.com/switchboard-chat/switchboard/bot/admin"
	"github.com/switchboard-chat/switchboard/channels"
)

// Access lists and decides access requests and takes access away (the
// access feature and its store, wired by cmd/switchboard).
type Access interface {
	admin.AccessRequests
	admin.AccessDecisions
	// RevokeAs takes identity's access away as by: access.ErrAllowedByConfig
	// for one the configuration allows.
	RevokeAs(ctx context.Context, identity, by string) (bool, error)
}

// accessData is what the Access page shows.
type accessData struct {
	Off     bool
	Pending []accessRequestView
	Allowed []AllowedIdentity
}

// accessRequestView is one pending request.
type accessRequestView struct {
	access.Request
	Chat string
}

// accessDone says what a change did, by the code its redirect carries.
var accessDone = map[string]string{
	access.StatusApproved: "Approved: they are told and may talk to the agents now.",
	access.StatusDenied:   "Denied: they are told.",
	"decided":             "Already decided, so nothing changed.",
	"revoked":             "Revoked: they can no longer talk to the agents.",
	"notallowed":          "They did not have access.",
	"config":              "Allowed by the configuration (admins or access.allow); remove them there.",
	"notfound":            "There is no such request.",
	"bad":                 "Choose approve or deny, or give platform:user_id to revoke.",
	"failed":              "Could not change access (storage unavailable); try again in a moment.",
}

func (c *Console) accessPage(w http.ResponseWriter, r *http.Request) {
	p := page{Title: "Access", Nav: "access", Session: current(r), Notice: accessDone[r.URL.Query().Get("done")]}
	d := accessData{Off: c.o.Access == nil}
	if !d.Off {
		pending, err := c.o.Access.PendingAccessRequests(r.Context())
		if err == nil {
			d.Allowed, err = c.o.Store.AllowedIdentities(r.Context())
		}
		if err != nil {
			c.log.Error("console: list access", "err", err)
			p.Error = "Could not list access (storage unavailable); reload in a moment."
		}
		for _, q := range pending {
			d.Pending = append(d.Pending, accessRequestView{Request: q, Chat: q.Chat.String()})
		}
	}
	p.Data = d
	c.render(w, r, http.StatusOK, "access", p)
}

// accessDecide approves or denies a request as the session's admin, as
// the chat's buttons do: the admins' messages are edited, the person told.
func (c *Console) accessDecide(w http.ResponseWriter, r *http.Request) {
	done := accessRedirect(w, r)
	status, ok := map[string]string{"approve": access.StatusApproved, "deny": access.StatusDenied}[r.PostFormValue("decision")]
	if !ok || c.o.Access == nil {
		done("bad")
		return
	}
	ctx, cancel := durable(r.Context())
	defer cancel()
	id, by := r.PathValue("id"), current(r).Identity
	q, changed, err := c.o.Access.DecideAccessAs(ctx, id, status, by)
	switch {
	case errors.Is(err, bot.ErrNotFound):
		done("notfound")
	case err != nil:
		c.log.Error("console: decide access", "request_id", id, "err", err)
		done("failed")
	case !changed:
		done("decided")
	default:
		c.log.Info("console access decision", "request_id", id, "status", q.Status, "by", by)
		done(q.Status)
	}
}

// accessRevoke takes someone's access away as the session's admin.
func (c *Console) accessRevoke(w http.ResponseWriter, r *http.Request) {
	done := accessRedirect(w, r)
	identity := r.PostFormValue("identity")
	if _, err := channels.ParseAddress(identity); err != nil || identity == "" || c.o.Access == nil {
		done("bad")
		return
	}
	ctx, cancel := durable(r.Context())
	defer cancel()
	was, err := c.o.Access.RevokeAs(ctx, identity, current(r).Identity)
	switch {
	case errors.Is(err, access.ErrAllowedByConfig):
		done("config")
	case err != nil:
		c.log.Error("console: revoke", "identity", identity, "err", err)
		done("failed")
	case !was:
		done("notallowed")
	default:
		done("revoked")
	}
}

// accessRedirect returns the redirect back to the Access page with code.
func accessRedirect(w http.ResponseWriter, r *http.Request) func(code string) {
	return func(code string) {
		http.Redirect(w, r, "/admin/access?done="+url.QueryEscape(code), http.StatusSeeOther)
	}
}
