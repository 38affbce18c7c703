// Package admin serves the admin HTTP API (/api/v1/…, docs/admin-api.md):
// approvals, access requests, jobs, agents, sessions, the audit log, custom
// tools, MCP servers and grants, behind the admin token.
package admin

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/access"
	"github.com/switchboard-chat/switchboard/bot/approvals"
	"github.com/switchboard-chat/switchboard/tools/sessions"
)

// The admin API: JSON under /api/v1, for operators and scripts. Every
// request carries Authorization: Bearer <http.admin_token>; without the
// right token it is 401 and nothing happens. A decision made through it is
// recorded as made by APIActor. docs/admin-api.md describes each endpoint.

// APIActor is who the audit log names for what the admin API does.
const APIActor = "admin-api"

// AuditRecord is one audit log entry, as the API shows it.
type AuditRecord struct {
	At          time.Time      `json:"at"`
	Actor       string         `json:"actor"`
	Action      string         `json:"action"`
	SubjectKind string         `json:"subject_kind"`
	SubjectID   string         `json:"subject_id"`
	Detail      map[string]any `json:"detail,omitempty"`
}

// GrantAdmin lists and changes grants directly (Postgres implements it).
type GrantAdmin interface {
	ListGrants(ctx context.Context) ([]access.Grant, error)
	PutGrant(ctx context.Context, g access.Grant) error
	DeleteGrant(ctx context.Context, server, kind, subject, by string) (bool, error)
}

// AdminAPIOptions wires the admin API; a nil part answers 404.
type AdminAPIOptions struct {
	Token     string
	Router    *bot.Router
	Approvals *approvals.Service
	Access    interface {
		PendingAccessRequests(ctx context.Context) ([]access.Request, error)
	}
	// Requests decides access requests (POST …/access-requests/{id}/decision).
	Requests *access.Service
	// Jobs lists the scheduled jobs as GET /api/v1/jobs shows them (the
	// jobs feature's AdminList).
	Jobs     func(ctx context.Context) (any, error)
	Sessions interface {
		ListSessions(ctx context.Context, agent, scope string, limit int) ([]sessions.SessionInfo, error)
	}
	Audit  func(ctx context.Context, limit int) ([]AuditRecord, error)
	Grants GrantAdmin
	// MCP lists the MCP servers with their state, and adds (stores and
	// connects) or removes run-time ones.
	MCP struct {
		List   func(ctx context.Context) (any, error)
		Add    func(ctx context.Context, raw json.RawMessage, by string) error
		Remove func(ctx context.Context, name, by string) (bool, error)
	}
	Logger *slog.Logger
}

// NewAdminAPI returns the /api/v1 handler; nil when no token is set (the
// API is off).
func NewAdminAPI(o AdminAPIOptions) http.Handler {
	if o.Token == "" {
		return nil
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	a := &adminAPI{o: o, token: sha256.Sum256([]byte(o.Token))}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/approvals", a.approvals)
	mux.HandleFunc("POST /api/v1/approvals/{id}/decision", a.decideApproval)
	mux.HandleFunc("GET /api/v1/access-requests", a.accessRequests)
	mux.HandleFunc("POST /api/v1/access-requests/{id}/decision", a.decideAccess)
	mux.HandleFunc("GET /api/v1/jobs", a.jobs)
	mux.HandleFunc("GET /api/v1/agents", a.agents)
	mux.HandleFunc("GET /api/v1/sessions", a.sessions)
	mux.HandleFunc("GET /api/v1/audit", a.audit)
	mux.HandleFunc("GET /api/v1/custom-tools", a.customTools)
	mux.HandleFunc("POST /api/v1/custom-tools", a.addCustomTool)
	mux.HandleFunc("DELETE /api/v1/custom-tools/{name}", a.deleteCustomTool)
	mux.HandleFunc("GET /api/v1/mcp/servers", a.mcpServers)
	mux.HandleFunc("POST /api/v1/mcp/servers", a.addMCPServer)
	mux.HandleFunc("DELETE /api/v1/mcp/servers/{name}", a.deleteMCPServer)
	mux.HandleFunc("GET /api/v1/grants", a.grants)
	mux.HandleFunc("POST /api/v1/grants", a.putGrant)
	mux.HandleFunc("DELETE /api/v1/grants/{server}/{kind}/{subject}", a.deleteGrant)
	mux.HandleFunc("/api/v1/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such endpoint; see docs/admin-api.md")
	})
	return a.authenticated(mux)
}

type adminAPI struct {
	o     AdminAPIOptions
	token [32]byte
}

// authenticated lets through only requests with the right bearer token,
// compared in constant time (of hashes, so not even the length leaks).
func (a *adminAPI) authenticated(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		sum := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(sum[:], a.token[:]) != 1 {
			a.o.Logger.Warn("admin API request without the right token", "path", r.URL.Path, "remote", r.RemoteAddr)
			w.Header().Set("WWW-Authenticate", `Bearer realm="switchboard"`)
			writeError(w, http.StatusUnauthorized, "send Authorization: Bearer <http.admin_token>")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}

// storeFailed answers a storage error without its details.
func (a *adminAPI) storeFailed(w http.ResponseWriter, what string, err error) {
	a.o.Logger.Error("admin API: "+what, "err", err)
	writeError(w, http.StatusServiceUnavailable, what+" failed (storage unavailable); try again")
}

// readJSON decodes a small JSON body into v.
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	if err := dec.Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "the body is not the JSON this endpoint takes: "+err.Error())
		return false
	}
	return true
}

func limitOf(r *http.Request, def, max int) int {
	n, err := strconv.Atoi(r.URL.Query().Get("limit"))
	if err != nil || n <= 0 {
		return def
	}
	return min(n, max)
}

// approvalJSON is an approval as the API shows it.
func approvalJSON(ap approvals.Approval) map[string]any {
	return map[string]any{"id": ap.ID, "status": ap.Status, "tool": ap.Tool, "command": ap.Command, "agent": ap.Agent,
		"session": ap.Session, "chat": ap.Chat.String(), "requester": ap.Requester, "warnings": ap.Warnings,
		"expires_at": ap.ExpiresAt}
}

func (a *adminAPI) approvals(w http.ResponseWriter, r *http.Request) {
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

func (a *adminAPI) decideApproval(w http.ResponseWriter, r *http.Request) {
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
	ap, changed, err := a.o.Approvals.DecideAs(r.Context(), r.PathValue("id"), status, APIActor)
	switch {
	case errors.Is(err, bot.ErrNotFound):
		writeError(w, http.StatusNotFound, "no such approval")
	case errors.Is(err, approvals.ErrDangerousAlways):
		writeError(w, http.StatusConflict, err.Error())
	case err != nil:
		a.storeFailed(w, "deciding", err)
	case !changed:
		writeJSON(w, http.StatusConflict, map[string]any{"error": "already decided", "approval": approvalJSON(ap)})
	default:
		writeJSON(w, http.StatusOK, map[string]any{"approval": approvalJSON(ap)})
	}
}

func (a *adminAPI) accessRequests(w http.ResponseWriter, r *http.Request) {
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

func (a *adminAPI) decideAccess(w http.ResponseWriter, r *http.Request) {
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
	if a.o.Requests == nil {
		writeError(w, http.StatusNotFound, "no such access request")
		return
	}
	q, changed, err := a.o.Requests.DecideAccessAs(r.Context(), r.PathValue("id"), status, APIActor)
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

func (a *adminAPI) jobs(w http.ResponseWriter, r *http.Request) {
	if a.o.Jobs == nil {
		writeError(w, http.StatusNotFound, "jobs are not set up")
		return
	}
	list, err := a.o.Jobs(r.Context())
	if err != nil {
		a.storeFailed(w, "listing jobs", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"jobs": list})
}

func (a *adminAPI) agents(w http.ResponseWriter, r *http.Request) {
	out := []map[string]any{}
	for _, ag := range a.o.Router.AgentInfo() {
		out = append(out, map[string]any{"name": ag.Name, "description": ag.Description, "model": ag.Model})
	}
	if len(out) == 0 {
		out = append(out, map[string]any{"name": a.o.Router.DefaultAgent()})
	}
	writeJSON(w, http.StatusOK, map[string]any{"agents": out})
}

func (a *adminAPI) sessions(w http.ResponseWriter, r *http.Request) {
	if a.o.Sessions == nil {
		writeError(w, http.StatusNotFound, "sessions are not available")
		return
	}
	q := r.URL.Query()
	agent := q.Get("agent")
	if agent == "" {
		agent = a.o.Router.DefaultAgent()
	}
	list, err := a.o.Sessions.ListSessions(r.Context(), agent, q.Get("scope"), limitOf(r, 50, 500))
	if err != nil {
		a.storeFailed(w, "listing sessions", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"sessions": list})
}

func (a *adminAPI) audit(w http.ResponseWriter, r *http.Request) {
	if a.o.Audit == nil {
		writeError(w, http.StatusNotFound, "the audit log is not available")
		return
	}
	list, err := a.o.Audit(r.Context(), limitOf(r, 100, 1000))
	if err != nil {
		a.storeFailed(w, "reading the audit log", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"audit": list})
}

func (a *adminAPI) customTools(w http.ResponseWriter, r *http.Request) {
	o := a.o.Router.CustomTools()
	if o.Store == nil {
		writeError(w, http.StatusNotFound, "custom tools are not set up")
		return
	}
	list, err := o.Store.List(r.Context())
	if err != nil {
		a.storeFailed(w, "listing custom tools", err)
		return
	}
	out := make([]map[string]any, 0, len(list))
	for _, t := range list {
		names := make([]string, 0, len(t.Env))
		for k := range t.Env {
			names = append(names, k) // never the values
		}
		out = append(out, map[string]any{"name": t.Name, "description": t.Description, "parameters": t.Parameters,
			"command": t.Command, "timeout": t.Timeout.String(), "env_names": names})
	}
	writeJSON(w, http.StatusOK, map[string]any{"custom_tools": out})
}

func (a *adminAPI) addCustomTool(w http.ResponseWriter, r *http.Request) {
	var j bot.CustomToolSpec
	if !readJSON(w, r, &j) {
		return
	}
	msg, err := a.o.Router.AddCustomTool(r.Context(), j, APIActor)
	if err != nil {
		writeError(w, http.StatusBadRequest, msg)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"name": j.Name, "result": msg})
}

func (a *adminAPI) deleteCustomTool(w http.ResponseWriter, r *http.Request) {
	o := a.o.Router.CustomTools()
	if o.Store == nil {
		writeError(w, http.StatusNotFound, "custom tools are not set up")
		return
	}
	name := r.PathValue("name")
	found, err := o.Store.Delete(r.Context(), name, APIActor)
	switch {
	case err != nil:
		a.storeFailed(w, "deleting", err)
	case !found:
		writeError(w, http.StatusNotFound, "no stored custom tool "+name)
	default:
		if o.Uninstall != nil {
			o.Uninstall(name)
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

func (a *adminAPI) mcpServers(w http.ResponseWriter, r *http.Request) {
	if a.o.MCP.List == nil {
		writeError(w, http.StatusNotFound, "MCP is not set up")
		return
	}
	list, err := a.o.MCP.List(r.Context())
	if err != nil {
		a.storeFailed(w, "listing MCP servers", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"servers": list})
}

func (a *adminAPI) addMCPServer(w http.ResponseWriter, r *http.Request) {
	if a.o.MCP.Add == nil {
		writeError(w, http.StatusNotFound, "MCP is not set up")
		return
	}
	var raw json.RawMessage
	if !readJSON(w, r, &raw) {
		return
	}
	if err := a.o.MCP.Add(r.Context(), raw, APIActor); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, http.StatusCreated, map[string]string{"result": "stored; connecting now"})
}

func (a *adminAPI) deleteMCPServer(w http.ResponseWriter, r *http.Request) {
	if a.o.MCP.Remove == nil {
		writeError(w, http.StatusNotFound, "MCP is not set up")
		return
	}
	found, err := a.o.MCP.Remove(r.Context(), r.PathValue("name"), APIActor)
	switch {
	case err != nil:
		writeError(w, http.StatusBadRequest, err.Error())
	case !found:
		writeError(w, http.StatusNotFound, "no MCP server "+r.PathValue("name")+" added at run time (the config's are changed there)")
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// grantJSON is a grant as the API takes and shows it.
type grantJSON struct {
	Server      string   `json:"server"`
	SubjectKind string   `json:"subject_kind"`
	Subject     string   `json:"subject"`
	Allow       []string `json:"allow"`
	Deny        []string `json:"deny"`
	GrantedBy   string   `json:"granted_by,omitempty"`
}

func (a *adminAPI) grants(w http.ResponseWriter, r *http.Request) {
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

func (a *adminAPI) putGrant(w http.ResponseWriter, r *http.Request) {
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

func (a *adminAPI) deleteGrant(w http.ResponseWriter, r *http.Request) {
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
