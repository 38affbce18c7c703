package admin

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// APIActor is who the audit log names for what the admin API does.
const APIActor = "admin-api"

// Options wire the admin API; a nil part answers 404.
type Options struct {
	Token           string
	Approvals       Approvals
	Access          AccessRequests
	AccessDecisions AccessDecisions
	// Jobs lists the scheduled jobs as GET /api/v1/jobs shows them (the
	// jobs feature's AdminList).
	Jobs        func(ctx context.Context) (any, error)
	Agents      Agents
	Sessions    Sessions
	Audit       func(ctx context.Context, limit int) ([]AuditRecord, error)
	Grants      Grants
	CustomTools CustomTools
	// MCP lists the MCP servers with their state, and adds (stores and
	// connects) or removes run-time ones.
	MCP struct {
		List   func(ctx context.Context) (any, error)
		Add    func(ctx context.Context, raw json.RawMessage, by string) error
		Remove func(ctx context.Context, name, by string) (bool, error)
	}
	// Usage serves GET /api/v1/usage: Rows sums the model usage since a
	// time grouped by one of GroupBys (the usage feature's).
	Usage struct {
		GroupBys []string
		Rows     func(ctx context.Context, groupBy string, since time.Time) (any, error)
	}
	Logger *slog.Logger
}

// NewAPI returns the /api/v1 handler; nil when no token is set (the API is
// off).
func NewAPI(o Options) http.Handler {
	if o.Token == "" {
		return nil
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	a := &api{o: o, token: sha256.Sum256([]byte(o.Token))}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/approvals", a.approvals)
	mux.HandleFunc("POST /api/v1/approvals/{id}/decision", a.decideApproval)
	mux.HandleFunc("GET /api/v1/access-requests", a.accessRequests)
	mux.HandleFunc("POST /api/v1/access-requests/{id}/decision", a.decideAccess)
	mux.HandleFunc("GET /api/v1/jobs", a.jobs)
	mux.HandleFunc("GET /api/v1/agents", a.agents)
	mux.HandleFunc("GET /api/v1/sessions", a.sessions)
	mux.HandleFunc("GET /api/v1/audit", a.audit)
	mux.HandleFunc("GET /api/v1/usage", a.usage)
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

type api struct {
	o     Options
	token [32]byte
}

// authenticated lets through only requests with the right bearer token,
// compared in constant time (of hashes, so not even the length leaks).
func (a *api) authenticated(next http.Handler) http.Handler {
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
func (a *api) storeFailed(w http.ResponseWriter, what string, err error) {
	a.o.Logger.Error("admin API: "+what, "err", err)
	writeError(w, http.StatusServiceUnavailable, what+" failed (storage unavailable); try again")
}

// answerList answers a listing: list under key, or the storage error of
// what.
func (a *api) answerList(w http.ResponseWriter, key, what string, list any, err error) {
	if err != nil {
		a.storeFailed(w, what, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{key: list})
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
