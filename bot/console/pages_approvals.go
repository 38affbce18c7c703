package console

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/approvals"
	"github.com/switchboard-chat/switchboard/bot/quorum"
)

// approvalsData is what the approvals list shows.
type approvalsData struct {
	Off  bool
	List []approvalView
	CSRF string
}

// approvalView is one pending approval on the page.
type approvalView struct {
	approvals.Approval
	Chat   string
	Quorum int
	Allows int
}

// decisions are the choices the page's buttons send.
var decisions = map[string]string{
	"allow_once": approvals.StatusAllowedOnce, "allow_always": approvals.StatusAllowedAlways, "deny": approvals.StatusDenied,
}

// doneText says what a decision did, by the code the redirect after it
// carries (a code, so no text of the request is reflected).
var doneText = map[string]string{
	approvals.StatusAllowedOnce:   "Allowed once; the command runs now.",
	approvals.StatusAllowedAlways: "Always allowed; the command runs now and its pattern is remembered.",
	approvals.StatusDenied:        "Denied; the agent is told.",
	"counted":                     "Your vote is counted; more people must allow it.",
	"repeated":                    "You voted on this already; another approver must decide.",
	"closed":                      "Already decided, so your vote changed nothing.",
	"notfound":                    "That approval does not exist.",
	"dangerous":                   "\"Always allow\" is not offered for a command flagged dangerous; allow once or deny.",
	"own":                         "You asked for this; another approver must decide.",
	"notapprover":                 "You are not one of this approval's approvers (approvals.approvers, approvals.rules), so nothing changed.",
	"bad":                         "Choose Allow once, Always allow or Deny.",
	"failed":                      "Could not record your decision (storage unavailable); try again in a moment.",
}

// pendingData loads the list for the session s.
func (c *Console) pendingData(r *http.Request, s Session) (approvalsData, error) {
	d := approvalsData{Off: c.o.Approvals == nil, CSRF: s.CSRF}
	if d.Off {
		return d, nil
	}
	list, err := c.o.Approvals.Pending(r.Context())
	if err != nil {
		return d, err
	}
	for _, a := range list {
		d.List = append(d.List, approvalView{Approval: a, Chat: a.Chat.String(), Quorum: max(a.Quorum, 1), Allows: quorum.Allows(a.Votes)})
	}
	return d, nil
}

func (c *Console) approvalsPage(w http.ResponseWriter, r *http.Request) {
	s := current(r)
	p := page{Title: "Approvals", Nav: "approvals", Session: s, Notice: doneText[r.URL.Query().Get("done")]}
	d, err := c.pendingData(r, s)
	if err != nil {
		c.log.Error("console: list approvals", "err", err)
		p.Error = "Could not list the approvals (storage unavailable); reload in a moment."
	}
	p.Data = d
	c.render(w, r, http.StatusOK, "approvals", p)
}

// approvalsLive is the list alone, which the page's script fetches to stay
// current.
func (c *Console) approvalsLive(w http.ResponseWriter, r *http.Request) {
	d, err := c.pendingData(r, current(r))
	if err != nil {
		c.log.Error("console: list approvals", "err", err)
		http.Error(w, "storage unavailable", http.StatusServiceUnavailable)
		return
	}
	c.renderTemplate(w, http.StatusOK, "approvals", "approvals-list", d)
}

// decide votes as the session's admin, through the same durable vote as a
// button press, with the same check that they may vote on it: the chat's
// messages are edited and the run resumes.
func (c *Console) decide(w http.ResponseWriter, r *http.Request) {
	done := func(code string) {
		http.Redirect(w, r, "/admin/approvals?done="+url.QueryEscape(code), http.StatusSeeOther)
	}
	status, ok := decisions[r.PostFormValue("decision")]
	if !ok || c.o.Approvals == nil {
		done("bad")
		return
	}
	s := current(r)
	ctx, cancel := durable(r.Context())
	defer cancel()
	id := r.PathValue("id")
	vote := c.o.Approvals.VoteAsApprover
	if s.Identity == TokenActor {
		vote = c.o.Approvals.Vote // the token's holder, trusted as in the admin API
	}
	a, outcome, err := vote(ctx, id, status, s.Identity)
	switch {
	case errors.Is(err, approvals.ErrNotApprover):
		c.log.Warn("console vote by a non-approver", "approval_id", id, "identity", s.Identity)
		done("notapprover")
	case errors.Is(err, bot.ErrNotFound):
		done("notfound")
	case errors.Is(err, approvals.ErrDangerousAlways):
		done("dangerous")
	case errors.Is(err, approvals.ErrOwnRequest):
		done("own")
	case err != nil:
		c.log.Error("console: vote", "approval_id", id, "err", err)
		done("failed")
	case outcome == approvals.VoteCounted:
		c.log.Info("console vote counted", "approval_id", id, "by", s.Identity)
		done("counted")
	case outcome == approvals.VoteRepeated:
		done("repeated")
	case outcome == approvals.VoteClosed || outcome == approvals.VoteLate:
		done("closed")
	default:
		c.log.Info("console decision", "approval_id", id, "status", a.Status, "by", s.Identity)
		done(a.Status)
	}
}
