package console

import (
	"context"
	"crypto/sha256"
	"embed"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/admin"
	"github.com/switchboard-chat/switchboard/bot/approvals"
	"github.com/switchboard-chat/switchboard/tools/mcp"
)

// Lifetimes of links and sessions.
const (
	LinkTTL         = 10 * time.Minute
	SessionIdle     = 30 * time.Minute
	SessionLifetime = 12 * time.Hour
)

// TokenActor is who a session opened with http.admin_token is, in the
// audit log and on the decisions it makes.
const TokenActor = "admin-token"

// Options wire the console.
type Options struct {
	Store Store
	// PublicURL is http.public_url: login links start with it, and
	// cookies are Secure when it is https. Empty: /login says which key to
	// set.
	PublicURL string
	// AdminToken is http.admin_token; empty: only login links log in.
	AdminToken string
	// IsAdmin reports whether identity is an admin now (bot.Host's);
	// a session of someone no longer one ends.
	IsAdmin func(identity string) bool
	// Approvals lists and decides approvals (the approvals feature); nil:
	// the page says approvals are not set up.
	Approvals Approvals
	// Jobs lists, pauses, resumes and runs the scheduled jobs; nil: the
	// page says jobs are not set up.
	Jobs Jobs
	// Agents lists the agents with their effective tools; nil: none.
	Agents func() []Agent
	// Access lists and decides access requests and revokes access; nil:
	// the page says access requests are not set up.
	Access Access
	// System feeds the System page.
	System System
	Logger *slog.Logger
}

// Approvals is what the console needs of the approvals feature: the admin
// API's listing and vote (for sessions of the admin token, trusted like
// the API), and the vote of a button press, which only the approval's
// approvers may cast (for an admin logged in as themself).
type Approvals interface {
	admin.Approvals
	// VoteAsApprover records by's vote like a press of the approval's
	// button: approvals.ErrNotApprover when by may not vote on it.
	VoteAsApprover(ctx context.Context, id, status, by string) (approvals.Approval, approvals.VoteOutcome, error)
}

// System is what the System page shows of this replica and the others.
type System struct {
	// Replica names this process.
	Replica string
	// Checks returns the readiness checks (PostgreSQL, Redis, each
	// channel), as /readyz runs them.
	Checks func() map[string]bot.Check
	// Leaderships lists the leader keys this replica holds.
	Leaderships func() []string
	// MCP lists the MCP servers with their state; nil: none.
	MCP func() []mcp.Status
}

// Console serves the admin console and answers /login and /logout.
type Console struct {
	o     Options
	token [32]byte                      // hash of the admin token, compared in constant time
	pages map[string]*template.Template // by page name, each with the layout
	log   *slog.Logger
}

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// New returns the console.
func New(o Options) *Console {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.PublicURL = strings.TrimRight(o.PublicURL, "/")
	c := &Console{o: o, log: o.Logger}
	if o.AdminToken != "" {
		c.token = sha256.Sum256([]byte(o.AdminToken))
	}
	c.pages = parsePages()
	return c
}

// secure reports whether cookies must be Secure: the console is reached
// over https.
func (c *Console) secure() bool {
	u, err := url.Parse(c.o.PublicURL)
	return err == nil && u.Scheme == "https"
}

// Handler serves everything under /admin.
func (c *Console) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(staticFiles, "static")
	mux.Handle("GET /admin/static/", http.StripPrefix("/admin/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /admin/login", c.loginPage)
	mux.HandleFunc("POST /admin/login", c.login)
	mux.HandleFunc("GET /admin", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/admin/approvals", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /admin/{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/admin/approvals", http.StatusSeeOther)
	})
	mux.Handle("POST /admin/logout", c.authed(true, c.logout))
	mux.Handle("GET /admin/approvals", c.authed(true, c.approvalsPage))
	mux.Handle("GET /admin/approvals/live", c.authed(false, c.approvalsLive))
	mux.Handle("POST /admin/approvals/{id}/decision", c.authed(true, c.decide))
	mux.Handle("GET /admin/audit", c.authed(true, c.auditPage))
	mux.Handle("GET /admin/conversations", c.authed(true, c.conversationsPage))
	mux.Handle("GET /admin/conversations/view", c.authed(true, c.conversationPage))
	mux.Handle("GET /admin/jobs", c.authed(true, c.jobsPage))
	mux.Handle("POST /admin/jobs/{name}/action", c.authed(true, c.jobAction))
	mux.Handle("GET /admin/usage", c.authed(true, c.usagePage))
	mux.Handle("GET /admin/agents", c.authed(true, c.agentsPage))
	mux.Handle("GET /admin/access", c.authed(true, c.accessPage))
	mux.Handle("POST /admin/access/{id}/decision", c.authed(true, c.accessDecide))
	mux.Handle("POST /admin/access/revoke", c.authed(true, c.accessRevoke))
	mux.Handle("GET /admin/system", c.authed(true, c.systemPage))
	mux.HandleFunc("/admin/", func(w http.ResponseWriter, r *http.Request) {
		c.render(w, r, http.StatusNotFound, "error", page{Title: "Not found", Error: "There is no such page; the menu above lists them."})
	})
	return securityHeaders(mux)
}

// securityHeaders sets on every response what keeps the console's pages
// from running anything but its own script, being framed, cached or
// leaking their address.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
			"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r)
	})
}

// durable is a context for a write that must finish even when the request
// is cancelled (the client went away) or the daemon shuts down.
func durable(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
}
