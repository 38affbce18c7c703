package admin

import (
	"net/http"

	"github.com/switchboard-chat/switchboard/bot/access"
)

// grantJSON is a grant as the API takes and shows it.
type grantJSON struct {
	Server      string   `json:"server"`
	SubjectKind string   `json:"subject_kind"`
	Subject     string   `json:"subject"`
	Allow       []string `json:"allow"`
	Deny        []string `json:"deny"`
	GrantedBy   string   `json:"granted_by,omitempty"`
}

func (a *api) grants(w http.ResponseWriter, r *http.Request) {
	if a.o.Grants == nil {
		writeError(w, http.StatusNotFound, "grants are not set up")
		return
	}
	list, err := a.o.Grants.ListGrants(r.Context())
	if err != nil {
		a.storeFailed(w, "listing grants", err)
		return
	}
	out := make([]grantJSON, 0, len(list))
	for _, g := range list {
		out = append(out, grantJSON{Server: g.Server, SubjectKind: g.SubjectKind, Subject: g.Subject, Allow: g.Allow, Deny: g.Deny, GrantedBy: g.GrantedBy})
	}
	writeJSON(w, http.StatusOK, map[string]any{"grants": out})
}

func (a *api) putGrant(w http.ResponseWriter, r *http.Request) {
	if a.o.Grants == nil {
		writeError(w, http.StatusNotFound, "grants are not set up")
		return
	}
	var g grantJSON
	if !readJSON(w, r, &g) {
		return
	}
	if g.Server == "" || g.Subject == "" || (g.SubjectKind != access.GrantAgent && g.SubjectKind != access.GrantUser) {
		writeError(w, http.StatusBadRequest, `pass {"server": "github", "subject_kind": "agent"|"user", "subject": "ops" or "telegram:42", "allow": [], "deny": []}`)
		return
	}
	if err := a.o.Grants.PutGrant(r.Context(), access.Grant{Server: g.Server, SubjectKind: g.SubjectKind, Subject: g.Subject,
		Allow: g.Allow, Deny: g.Deny, GrantedBy: APIActor}); err != nil {
		a.storeFailed(w, "storing the grant", err)
		return
	}
	writeJSON(w, http.StatusCreated, g)
}

func (a *api) deleteGrant(w http.ResponseWriter, r *http.Request) {
	if a.o.Grants == nil {
		writeError(w, http.StatusNotFound, "grants are not set up")
		return
	}
	found, err := a.o.Grants.DeleteGrant(r.Context(), r.PathValue("server"), r.PathValue("kind"), r.PathValue("subject"), APIActor)
	switch {
	case err != nil:
		a.storeFailed(w, "deleting the grant", err)
	case !found:
		writeError(w, http.StatusNotFound, "no such grant")
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}
