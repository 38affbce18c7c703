package console_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/approvals"
	"github.com/switchboard-chat/switchboard/bot/console"
	"github.com/switchboard-chat/switchboard/bot/usage"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

const admin = "telegram:42"

// fakeApprovals is one pending approval whose votes are recorded.
type fakeApprovals struct {
	mu    sync.Mutex
	list  []approvals.Approval
	votes []string // "id status by"
}

func (f *fakeApprovals) Pending(context.Context) ([]approvals.Approval, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]approvals.Approval(nil), f.list...), nil
}

func (f *fakeApprovals) Vote(_ context.Context, id, status, by string) (approvals.Approval, approvals.VoteOutcome, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, a := range f.list {
		if a.ID == id {
			f.votes = append(f.votes, id+" "+status+" "+by)
			a.Status, a.DecidedBy = status, by
			f.list = append(f.list[:i], f.list[i+1:]...)
			return a, approvals.VoteDecided, nil
		}
	}
	if len(f.votes) > 0 {
		return approvals.Approval{ID: id}, approvals.VoteClosed, nil
	}
	return approvals.Approval{}, 0, bot.ErrNotFound
}

// VoteAsApprover lets only the admin vote, as a rule naming them would.
func (f *fakeApprovals) VoteAsApprover(ctx context.Context, id, status, by string) (approvals.Approval, approvals.VoteOutcome, error) {
	if by != admin {
		return approvals.Approval{}, 0, approvals.ErrNotApprover
	}
	return f.Vote(ctx, id, status, by)
}

func (f *fakeApprovals) voted() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.votes...)
}

// host is a bot.Host with one admin.
type host struct{}

func (host) IsAdmin(id string) bool { return id == admin || id == otherAdmin }

// otherAdmin is an admin whom no approval rule lets vote.
const otherAdmin = "telegram:43"

// rig is a console on a fresh database behind an httptest server.
type rig struct {
	db  *postgres.DB
	c   *console.Console
	ts  *httptest.Server
	aps *fakeApprovals
}

func newRig(t *testing.T, publicURL string) *rig {
	t.Helper()
	db := pgtest.Open(t, context.Background())
	aps := &fakeApprovals{list: []approvals.Approval{{ID: "ap1", Tool: "exec", Status: approvals.StatusPending,
		Command: `echo "<script>alert(1)</script><img src=x onerror=alert(2)>"`, Agent: "ops", Requester: "telegram:7",
		Chat: channels.Address{Platform: "telegram", ChatID: "7"}, ExpiresAt: time.Now().Add(time.Minute)}}}
	r := &rig{db: db, aps: aps}
	ts := httptest.NewUnstartedServer(nil)
	if publicURL == "" {
		publicURL = "http://" + ts.Listener.Addr().String()
	}
	r.c = console.New(console.Options{Store: db, PublicURL: publicURL, AdminToken: "tok-123", Approvals: aps,
		IsAdmin: host{}.IsAdmin})
	ts.Config.Handler = r.c.Handler()
	ts.Start()
	t.Cleanup(ts.Close)
	r.ts = ts
	return r
}

// browser is a client with its own cookies that does not follow redirects.
func (r *rig) browser(t *testing.T) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
}

func do(t *testing.T, c *http.Client, method, u string, form url.Values, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// login asks /login as who in a direct message and returns the reply.
func (r *rig) login(t *testing.T, who string, direct bool) string {
	t.Helper()
	platform, user, _ := strings.Cut(who, ":")
	in := channels.Inbound{Platform: platform, UserID: user, ChatID: user, Direct: direct}
	for _, cmd := range r.c.Commands() {
		if cmd.Name == "login" {
			return cmd.Run(context.Background(), host{}, in, "")
		}
	}
	t.Fatal("no /login")
	return ""
}

var linkRE = regexp.MustCompile(`(http://\S+/admin/login\?t=)([a-z2-7]{52})`)

var hiddenRE = regexp.MustCompile(`name="(csrf|login_csrf)" value="([^"]+)"`)

// field returns the value of hidden field name in page.
func field(t *testing.T, page, name string) string {
	t.Helper()
	for _, m := range hiddenRE.FindAllStringSubmatch(page, -1) {
		if m[1] == name {
			return m[2]
		}
	}
	t.Fatalf("no %s field in %s", name, page)
	return ""
}

// useLink opens link in c and presses Log in; it returns the response.
func useLink(t *testing.T, c *http.Client, link string) (*http.Response, string) {
	t.Helper()
	_, page := do(t, c, "GET", link, nil, nil)
	u, _ := url.Parse(link)
	return do(t, c, "POST", u.Scheme+"://"+u.Host+"/admin/login",
		url.Values{"t": {u.Query().Get("t")}, "login_csrf": {field(t, page, "login_csrf")}}, nil)
}

// TestConsoleLoginLink: only an admin in a direct message gets a link;
// opening it uses nothing, pressing Log in does, once; a changed token is
// refused; the session cookie is HttpOnly, SameSite=Strict, /admin.
func TestConsoleLoginLink(t *testing.T) {
	r := newRig(t, "")
	if got := r.login(t, "telegram:7", true); !strings.Contains(got, "Only admins") || linkRE.MatchString(got) {
		t.Fatalf("a non-admin's /login = %q", got)
	}
	if got := r.login(t, admin, false); !strings.Contains(got, "direct message") || linkRE.MatchString(got) {
		t.Fatalf("/login in a group = %q", got)
	}
	m := linkRE.FindStringSubmatch(r.login(t, admin, true))
	if m == nil {
		t.Fatal("no link for an admin")
	}
	link := m[0]
	b := r.browser(t)
	do(t, b, "GET", link, nil, nil) // a link preview
	changed := m[1] + strings.Repeat("a", 52)
	if resp, body := useLink(t, b, changed); resp.StatusCode != 403 || !strings.Contains(body, "not valid") {
		t.Fatalf("a changed token: %d %s", resp.StatusCode, body)
	}
	resp, _ := useLink(t, b, link)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/admin/approvals" {
		t.Fatalf("using the link: %d %v", resp.StatusCode, resp.Header)
	}
	var ck *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "sb_console" {
			ck = c
		}
	}
	if ck == nil || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/admin" || ck.Secure {
		t.Fatalf("session cookie = %+v", ck)
	}
	if resp, body := do(t, b, "GET", r.ts.URL+"/admin/approvals", nil, nil); resp.StatusCode != 200 || !strings.Contains(body, admin) {
		t.Fatalf("approvals after login: %d %s", resp.StatusCode, body)
	}
	other := r.browser(t)
	if resp, body := useLink(t, other, link); resp.StatusCode != 403 || !strings.Contains(body, "not valid") {
		t.Fatalf("the link used again: %d %s", resp.StatusCode, body)
	}
	// Without the login form's own token nothing is used.
	m2 := linkRE.FindStringSubmatch(r.login(t, admin, true))
	if resp, _ := do(t, other, "POST", r.ts.URL+"/admin/login", url.Values{"t": {m2[2]}}, nil); resp.StatusCode != 403 {
		t.Fatalf("a login post without its form token: %d", resp.StatusCode)
	}
	if resp, _ := useLink(t, other, m2[0]); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("the unspent link after a refused post: %d", resp.StatusCode)
	}
}

// TestConsoleSecureCookieAndHeaders: behind https the cookie is Secure;
// every response, errors and assets included, has the strict headers.
func TestConsoleSecureCookieAndHeaders(t *testing.T) {
	r := newRig(t, "https://bot.example.com")
	b := r.browser(t)
	resp, _ := do(t, b, "POST", r.ts.URL+"/admin/login", nil, map[string]string{"Authorization": "Bearer tok-123"})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("bearer login: %d", resp.StatusCode)
	}
	if c := resp.Cookies(); len(c) == 0 || !c[0].Secure {
		t.Fatalf("cookies behind https: %+v", c)
	}
	for _, path := range []string{"/admin/login", "/admin/approvals", "/admin/nope", "/admin/static/console.css", "/admin/static/console.js"} {
		resp, _ := do(t, b, "GET", r.ts.URL+path, nil, nil)
		h := resp.Header
		if !strings.Contains(h.Get("Content-Security-Policy"), "default-src 'none'; script-src 'self'") ||
			!strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") ||
			h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "no-referrer" || h.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: headers %v", path, h)
		}
	}
	if resp, _ := do(t, r.browser(t), "POST", r.ts.URL+"/admin/login", nil, map[string]string{"Authorization": "Bearer wrong"}); resp.StatusCode != 403 {
		t.Errorf("a wrong bearer token: %d", resp.StatusCode)
	}
}

// TestConsoleDecideNeedsCSRF: a decision without the session's token, or
// with a wrong one, changes nothing (403); with it the vote is the admin's;
// a replay changes nothing more. Chat text shows escaped.
func TestConsoleDecideNeedsCSRF(t *testing.T) {
	r := newRig(t, "")
	b := r.browser(t)
	useLink(t, b, linkRE.FindString(r.login(t, admin, true)))
	_, page := do(t, b, "GET", r.ts.URL+"/admin/approvals", nil, nil)
	if strings.Contains(page, "<script>alert") || strings.Contains(page, "<img src=x") || !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Fatalf("the command is not escaped: %s", page)
	}
	csrf := field(t, page, "csrf")
	post := r.ts.URL + "/admin/approvals/ap1/decision"
	for _, form := range []url.Values{{"decision": {"allow_once"}}, {"decision": {"allow_once"}, "csrf": {csrf + "x"}}, {"decision": {"allow_once"}, "csrf": {""}}} {
		if resp, _ := do(t, b, "POST", post, form, nil); resp.StatusCode != http.StatusForbidden {
			t.Errorf("decision %v: %d, want 403", form, resp.StatusCode)
		}
	}
	if v := r.aps.voted(); len(v) != 0 {
		t.Fatalf("refused posts voted: %v", v)
	}
	good := url.Values{"decision": {"allow_once"}, "csrf": {csrf}}
	resp, _ := do(t, b, "POST", post, good, nil)
	if resp.StatusCode != http.StatusSeeOther || !strings.Contains(resp.Header.Get("Location"), "done=allowed_once") {
		t.Fatalf("the decision: %d %v", resp.StatusCode, resp.Header)
	}
	if resp, _ := do(t, b, "POST", post, good, nil); !strings.Contains(resp.Header.Get("Location"), "done=closed") {
		t.Errorf("the replay: %v", resp.Header)
	}
	if v := r.aps.voted(); len(v) != 1 || v[0] != "ap1 allowed_once "+admin {
		t.Errorf("votes = %v, want one by %s", v, admin)
	}
}

// TestConsoleLogout: /logout in the chat ends every session of that admin;
// the console's own button ends its session.
func TestConsoleLogout(t *testing.T) {
	r := newRig(t, "")
	b1, b2 := r.browser(t), r.browser(t)
	useLink(t, b1, linkRE.FindString(r.login(t, admin, true)))
	useLink(t, b2, linkRE.FindString(r.login(t, admin, true)))
	var logout bot.Command
	for _, c := range r.c.Commands() {
		if c.Name == "logout" {
			logout = c
		}
	}
	if got := logout.Run(context.Background(), host{}, channels.Inbound{Platform: "telegram", UserID: "42"}, ""); !strings.Contains(got, "Ended 2") {
		t.Fatalf("/logout = %q", got)
	}
	for _, b := range []*http.Client{b1, b2} {
		if resp, _ := do(t, b, "GET", r.ts.URL+"/admin/approvals", nil, nil); resp.StatusCode != http.StatusSeeOther ||
			resp.Header.Get("Location") != "/admin/login" {
			t.Errorf("after /logout: %d %v", resp.StatusCode, resp.Header)
		}
	}
	useLink(t, b1, linkRE.FindString(r.login(t, admin, true)))
	_, page := do(t, b1, "GET", r.ts.URL+"/admin/audit", nil, nil)
	if !strings.Contains(page, "console.logout") || !strings.Contains(page, "console.login") {
		t.Errorf("the audit page does not show the logins and logouts: %s", page)
	}
	resp, _ := do(t, b1, "POST", r.ts.URL+"/admin/logout", url.Values{"csrf": {field(t, page, "csrf")}}, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("console logout: %d", resp.StatusCode)
	}
	if resp, _ := do(t, b1, "GET", r.ts.URL+"/admin/system", nil, nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("after the console's logout: %d", resp.StatusCode)
	}
}

// TestConsoleNoPublicURL: without http.public_url /login names the key.
func TestConsoleNoPublicURL(t *testing.T) {
	c := console.New(console.Options{Store: pgtest.Open(t, context.Background())})
	got := c.Commands()[0].Run(context.Background(), host{}, channels.Inbound{Platform: "telegram", UserID: "42", Direct: true}, "")
	if !strings.Contains(got, "http.public_url") || !strings.Contains(got, "SWITCHBOARD_HTTP_PUBLIC_URL") {
		t.Errorf("/login without a public URL = %q", got)
	}
}

// TestConsoleDecideOnlyApprovers: an admin who is not one of the
// approval's approvers changes nothing, as their button press would not;
// the admin token's session votes as admin-token, trusted as the API is.
func TestConsoleDecideOnlyApprovers(t *testing.T) {
	r := newRig(t, "")
	b := r.browser(t)
	useLink(t, b, linkRE.FindString(r.login(t, otherAdmin, true)))
	_, page := do(t, b, "GET", r.ts.URL+"/admin/approvals", nil, nil)
	post := r.ts.URL + "/admin/approvals/ap1/decision"
	resp, _ := do(t, b, "POST", post, url.Values{"decision": {"deny"}, "csrf": {field(t, page, "csrf")}}, nil)
	if !strings.Contains(resp.Header.Get("Location"), "done=notapprover") || len(r.aps.voted()) != 0 {
		t.Fatalf("a non-approver's decision: %v, votes %v", resp.Header, r.aps.voted())
	}
	tok := r.browser(t)
	do(t, tok, "POST", r.ts.URL+"/admin/login", nil, map[string]string{"Authorization": "Bearer tok-123"})
	_, page = do(t, tok, "GET", r.ts.URL+"/admin/approvals", nil, nil)
	do(t, tok, "POST", post, url.Values{"decision": {"deny"}, "csrf": {field(t, page, "csrf")}}, nil)
	if v := r.aps.voted(); len(v) != 1 || v[0] != "ap1 denied "+console.TokenActor {
		t.Errorf("the token's decision: votes %v", v)
	}
}

// TestConsoleUsagePage: the chart is SVG drawn on the server, one bar part
// per day and key; a hostile key shows as text only.
func TestConsoleUsagePage(t *testing.T) {
	r := newRig(t, "")
	ctx := context.Background()
	for i, who := range []string{`<script>alert(1)</script>`, "telegram:1", "telegram:1"} {
		if err := r.db.InsertUsage(ctx, usage.Record{At: time.Now().Add(-time.Duration(i*25) * time.Hour), Identity: who, Agent: "ops",
			Model: "m", Tokens: usage.Tokens{Input: int64(100 * (i + 1))}}); err != nil {
			t.Fatal(err)
		}
	}
	b := r.browser(t)
	useLink(t, b, linkRE.FindString(r.login(t, admin, true)))
	resp, page := do(t, b, "GET", r.ts.URL+"/admin/usage?by=identity&days=7", nil, nil)
	if resp.StatusCode != 200 || !strings.Contains(page, `<svg class="chart"`) || strings.Count(page, "<rect x=") != 3 {
		t.Fatalf("usage page: %d %s", resp.StatusCode, page)
	}
	if strings.Contains(page, "<script>alert") || !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("the identity is not escaped: %s", page)
	}
	if !strings.Contains(page, "<td>500</td>") {
		t.Errorf("telegram:1's 500 tokens are not totalled: %s", page)
	}
	// An unknown grouping or span falls back to the defaults.
	if _, page := do(t, b, "GET", r.ts.URL+"/admin/usage?by=session_key&days=999", nil, nil); !strings.Contains(page, "by agent") {
		t.Errorf("fallback: %s", page)
	}
}
