package admin

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/access"
	"github.com/switchboard-chat/switchboard/bot/approvals"
)

// approvalJSON is an approval as the API shows it.
func approvalJSON(ap approvals.Approval) map[string]any {
	return map[string]any{"id": ap.ID, "status": ap.Status, "tool": ap.Tool, "command": ap.Command, "agent": ap.Agent,
		"session": ap.Session, "chat": ap.Chat.String(), "requester": ap.Requester, "warnings": ap.Warnings, "verb": ap.Verb,
		"expires_at": ap.ExpiresAt, "quorum": max(ap.Quorum, 1), "votes": votesJSON(ap.Votes), "decided_by": ap.DecidedBy}
}

// votesJSON are an approval's votes as the API shows them.
func votesJSON(votes []approvals.Vote) []map[string]any {
	out := make([]map[string]any, 0, len(votes))
	for _, v := range votes {
		out = append(out, map[string]any{"identity": v.Identity, "choice": v.Choice, "at": v.At})
	}
	return out
}

func (a *api) approvals(w http.ResponseWriter, r *http.Request) {
	if a.o.Approvals == nil {
		writeError(w, http.StatusNotFound, "approvals are not set up")
		return
	}
	if s := r.URL.Query().Get("status"); s != "" && s != approvals.StatusPending {
		writeError(w, http.StatusBadRequest, "only status=pending is listed; decided approvals are in /api/v1/audit")
		return
	}
	list, err := a.o.Approvals.Pending(r.Context())
	if err != nil {
		a.storeFailed(w, "listing approvals", err)
		return
	}
	out := make([]map[string]any, 0, len(list))
	for _, ap := range list {
		out = append(out, approvalJSON(ap))
	}
	writeJSON(w, http.StatusOK, map[string]any{"approvals": out})
}

func (a *api) decideApproval(w http.ResponseWriter, r *http.Request) {
	if a.o.Approvals == nil {
		writeError(w, http.StatusNotFound, "approvals are not set up")
		return
	}
	var body struct {
		Decision string `json:"decision"`
	}
	if !readJSON(w, r, &body) {
		return
	}
	status, ok := map[string]string{"allow_once": approvals.StatusAllowedOnce, "allow_always": approvals.StatusAllowedAlways, "deny": approvals.StatusDenied}[body.Decision]
	if !ok {
		writeError(w, http.StatusBadRequest, `decision must be "allow_once", "allow_always" or "deny"`)
		return
	}
	// The token's holder votes as APIActor: one vote, by one person.
	ap, outcome, err := a.o.Approvals.Vote(r.Context(), r.PathValue("id"), status, APIActor)
	switch {
	case errors.Is(err, bot.ErrNotFound):
		writeError(w, http.StatusNotFound, "no such approval")
	case errors.Is(err, approvals.ErrDangerousAlways), errors.Is(err, approvals.ErrNoAlways):
		writeError(w, http.StatusConflict, err.Error())
	case errors.Is(err, approvals.ErrOwnRequest):
		writeError(w, http.StatusForbidden, err.Error())
	case err != nil:
		a.storeFailed(w, "deciding", err)
	case outcome == approvals.VoteRepeated:
		writeJSON(w, http.StatusConflict, map[string]any{"error": "the admin API voted on this approval already", "approval": approvalJSON(ap)})
	case outcome == approvals.VoteClosed || outcome == approvals.VoteLate:
		writeJSON(w, http.StatusConflict, map[string]any{"error": "already decided", "approval": approvalJSON(ap)})
	default:
		writeJSON(w, http.StatusOK, map[string]any{"approval": approvalJSON(ap)})
	}
}

func (a *api) accessRequests(w http.ResponseWriter, r *http.Request) {
	if a.o.Access == nil {
		writeError(w, http.StatusNotFound, "access requests are not set up")
		return
	}
	list, err := a.o.Access.PendingAccessRequests(r.Context())
	if err != nil {
		a.storeFailed(w, "listing access requests", err)
		return
	}
	out := make([]map[string]any, 0, len(list))
	for _, q := range list {
		out = append(out, map[string]any{"id": q.ID, "identity": q.Identity, "display_name": q.DisplayName,
			"chat": q.Chat.String(), "status": q.Status, "created_at": q.CreatedAt})
	}
	writeJSON(w, http.StatusOK, map[string]any{"access_requests": out})
}

func (a *api) decideAccess(w http.ResponseWriter, r *http.Request) {
	if a.o.AccessDecisions == nil {
		writeError(w, http.StatusNotFound, "access requests are not set up")
		return
	}
	var body struct {
		Decision string `json:"decision"`
	}
	if !readJSON(w, r, &body) {
		return
	}
	status, ok := map[string]string{"approve": access.StatusApproved, "deny": access.StatusDenied}[body.Decision]
	if !ok {
		writeError(w, http.StatusBadRequest, `decision must be "approve" or "deny"`)
		return
	}
	q, changed, err := a.o.AccessDecisions.DecideAccessAs(r.Context(), r.PathValue("id"), status, APIActor)
	switch {
	case errors.Is(err, bot.ErrNotFound):
		writeError(w, http.StatusNotFound, "no such access request")
	case err != nil:
		a.storeFailed(w, "deciding", err)
	case !changed:
		writeError(w, http.StatusConflict, fmt.Sprintf("already decided: %s by %s", q.Status, q.DecidedBy))
	default:
		writeJSON(w, http.StatusOK, map[string]any{"id": q.ID, "identity": q.Identity, "status": q.Status})
	}
}
