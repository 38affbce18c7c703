package bot_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/access"
	"github.com/switchboard-chat/switchboard/bot/admin"
	"github.com/switchboard-chat/switchboard/bot/customtools"
	"github.com/switchboard-chat/switchboard/bot/jobs"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/tools"
	"github.com/switchboard-chat/switchboard/tools/exec"
)

const apiToken = "s3cret-admin-token-for-tests"

// adminServer serves the admin API of pipeline p, with the custom tools
// of catalog when it is set.
func adminServer(t *testing.T, p *pipeline, catalog *customtools.Catalog) *httptest.Server {
	o := admin.Options{
		Token: apiToken, Approvals: p.approvals, Access: p.db, AccessDecisions: p.access, Jobs: jobs.AdminList(p.db),
		Agents: p.router, Sessions: p.db, Grants: p.db,
		Audit: func(ctx context.Context, limit int) ([]admin.AuditRecord, error) {
			entries, err := p.db.Audit(ctx, limit)
			var out []admin.AuditRecord
			for _, e := range entries {
				out = append(out, admin.AuditRecord{At: e.At, Actor: e.Actor, Action: e.Action, SubjectID: e.SubjectID})
			}
			return out, err
		},
	}
	if catalog != nil {
		o.CustomTools = catalog
	}
	ts := httptest.NewServer(bot.NewHTTPHandler(bot.HTTPOptions{Admin: admin.NewAPI(o)}))
	t.Cleanup(ts.Close)
	return ts
}

// api makes one request and returns the status and body.
func api(t *testing.T, ts *httptest.Server, method, path, token, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func expect(t *testing.T, code int, body string, wantCode int, want string) {
	t.Helper()
	if code != wantCode || !strings.Contains(body, want) {
		t.Fatalf("got %d %s; want %d containing %q", code, body, wantCode, want)
	}
}

// TestAdminAPIAuth: without the token, with a wrong one, or with it in the
// wrong place, every endpoint is 401 and changes nothing; with no token
// configured the API is not there at all.
func TestAdminAPIAuth(t *testing.T) {
	p := newPipeline(t, bot.Limits{}, bot.AccessOptions{Admins: []string{"test:boss"}})
	ts := adminServer(t, p, nil)
	pending(t, p.approvals, approvalRequest("default/test:work", "call-auth", "uptime"))
	list, _ := p.approvals.Pending(context.Background())
	decide := "/api/v1/approvals/" + list[0].ID + "/decision"
	for _, token := range []string{"", "wrong", apiToken + "x", strings.ToUpper(apiToken)} {
		for _, c := range []struct{ method, path, body string }{
			{"GET", "/api/v1/approvals?status=pending", ""},
			{"POST", decide, `{"decision":"allow_once"}`},
			{"GET", "/api/v1/audit", ""},
			{"POST", "/api/v1/grants", `{"server":"x","subject_kind":"agent","subject":"default"}`},
		} {
			code, body := api(t, ts, c.method, c.path, token, c.body)
			expect(t, code, body, http.StatusUnauthorized, "Bearer")
		}
	}
	// The token as a query parameter or a basic password does not count.
	code, _ := api(t, ts, "GET", "/api/v1/audit?token="+apiToken, "", "")
	expect(t, code, "", http.StatusUnauthorized, "")
	if still, _ := p.approvals.Pending(context.Background()); len(still) != 1 {
		t.Fatal("an unauthenticated request decided the approval")
	}
	if grants, _ := p.db.ListGrants(context.Background()); len(grants) != 0 {
		t.Fatal("an unauthenticated request stored a grant")
	}
	off := httptest.NewServer(bot.NewHTTPHandler(bot.HTTPOptions{Admin: admin.NewAPI(admin.Options{})}))
	defer off.Close()
	code, _ = api(t, off, "GET", "/api/v1/audit", apiToken, "")
	expect(t, code, "", http.StatusNotFound, "")
}

// TestAdminAPIEndpoints: each endpoint, with the token.
func TestAdminAPIEndpoints(t *testing.T) {
	ctx := context.Background()
	p := newPipeline(t, bot.Limits{}, bot.AccessOptions{Admins: []string{"test:boss"}, Mode: bot.AccessModeRequest})
	reg := tools.NewRegistry(tools.RegistryOptions{})
	customs := postgres.CustomTools{DB: p.db}
	// The custom-tool store and installer a daemon wires.
	catalog := customtools.New(customtools.Options{Store: customs, Install: func(s exec.CustomSpec) error {
		c, err := exec.NewCustom(s, nil)
		if err == nil {
			err = reg.Register(c)
		}
		return err
	}, Uninstall: reg.Unregister})
	ts := adminServer(t, p, catalog)
	call := func(method, path, body string) (int, string) { return api(t, ts, method, path, apiToken, body) }

	// Approvals: list, decide once (audited as the API), the second is a conflict.
	pending(t, p.approvals, approvalRequest("default/test:work", "call-api", "make deploy"))
	code, body := call("GET", "/api/v1/approvals?status=pending", "")
	expect(t, code, body, 200, `"command":"make deploy"`)
	var list struct{ Approvals []struct{ ID string } }
	_ = json.Unmarshal([]byte(body), &list)
	id := list.Approvals[0].ID
	code, body = call("POST", "/api/v1/approvals/"+id+"/decision", `{"decision":"maybe"}`)
	expect(t, code, body, 400, "allow_once")
	code, body = call("POST", "/api/v1/approvals/"+id+"/decision", `{"decision":"allow_once"}`)
	expect(t, code, body, 200, `"status":"allowed_once"`)
	code, body = call("POST", "/api/v1/approvals/"+id+"/decision", `{"decision":"deny"}`)
	expect(t, code, body, 409, "already decided")
	code, body = call("POST", "/api/v1/approvals/nosuchapprovalid0000/decision", `{"decision":"deny"}`)
	expect(t, code, body, 404, "no such approval")
	code, body = call("GET", "/api/v1/approvals?status=denied", "")
	expect(t, code, body, 400, "only status=pending")

	// Access requests.
	req, _, err := p.db.OpenAccessRequest(ctx, access.Request{ID: "accessreq00000000001", Identity: "test:stranger",
		DisplayName: "Stella", Chat: channels.Address{Platform: "test", ChatID: "stranger"}}, 10, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	code, body = call("GET", "/api/v1/access-requests", "")
	expect(t, code, body, 200, `"identity":"test:stranger"`)
	code, body = call("POST", "/api/v1/access-requests/"+req.ID+"/decision", `{"decision":"approve"}`)
	expect(t, code, body, 200, `"status":"approved"`)
	told := p.ch.WaitFor(t, "stranger", 1)
	if !strings.Contains(told[0].Text, "an admin let you in") {
		t.Fatalf("the person was told %q", told[0].Text)
	}

	// Jobs, agents, sessions.
	if _, err := p.db.UpsertJob(ctx, jobs.Job{Name: "daily", Schedule: "0 9 * * *", Prompt: "report",
		Target: channels.Address{Platform: "test", ChatID: "c1"}, Enabled: true, Overlap: jobs.OverlapSkip, CatchUp: jobs.CatchUpNone,
		CreatedBy: "config", Source: jobs.JobFromConfig}); err != nil {
		t.Fatal(err)
	}
	code, body = call("GET", "/api/v1/jobs", "")
	expect(t, code, body, 200, `"name":"daily"`)
	code, body = call("GET", "/api/v1/agents", "")
	expect(t, code, body, 200, `"name":"default"`)
	p.router.Handle(ctx, msg("c1", "boss", "hello")) // an admin: let in
	p.ch.WaitFor(t, "c1", 1)
	code, body = call("GET", "/api/v1/sessions", "")
	expect(t, code, body, 200, "default/test:c1")

	// Custom tools: add, list (never the env values), delete.
	code, body = call("POST", "/api/v1/custom-tools", `{"name":"echo_it","description":"echo","command":"echo {{.x}}",`+
		`"parameters":{"type":"object","properties":{"x":{"type":"string"}}}}`)
	expect(t, code, body, 201, "Added custom tool echo_it")
	if _, ok := reg.Get("echo_it"); !ok {
		t.Fatal("the added tool was not installed")
	}
	code, body = call("POST", "/api/v1/custom-tools", `{"name":"bad","command":"echo {{.nope}}"}`)
	expect(t, code, body, 400, "not a property")
	code, body = call("POST", "/api/v1/custom-tools", `{"name":"envy","command":"true","env":{"K":"v"}}`)
	expect(t, code, body, 400, "secrets key") // no key configured: the value is not stored in plain text
	code, body = call("GET", "/api/v1/custom-tools", "")
	expect(t, code, body, 200, `"name":"echo_it"`)
	code, body = call("DELETE", "/api/v1/custom-tools/echo_it", "")
	expect(t, code, body, 204, "")
	if _, ok := reg.Get("echo_it"); ok {
		t.Fatal("the deleted tool is still installed")
	}
	code, body = call("DELETE", "/api/v1/custom-tools/echo_it", "")
	expect(t, code, body, 404, "no stored custom tool")

	// Grants.
	code, body = call("POST", "/api/v1/grants", `{"server":"github","subject_kind":"user","subject":"test:u1","allow":["create_issue"]}`)
	expect(t, code, body, 201, "create_issue")
	code, body = call("POST", "/api/v1/grants", `{"server":"github","subject_kind":"robot","subject":"x"}`)
	expect(t, code, body, 400, "subject_kind")
	code, body = call("GET", "/api/v1/grants", "")
	expect(t, code, body, 200, `"subject":"test:u1"`)
	code, body = call("DELETE", "/api/v1/grants/github/user/test:u1", "")
	expect(t, code, body, 204, "")

	// MCP is not wired in this pipeline; unknown paths say where the docs are.
	code, body = call("GET", "/api/v1/mcp/servers", "")
	expect(t, code, body, 404, "MCP is not set up")
	code, body = call("GET", "/api/v1/nothing", "")
	expect(t, code, body, 404, "docs/admin-api.md")

	// The audit log shows what the API did, as the API.
	code, body = call("GET", "/api/v1/audit?limit=50", "")
	expect(t, code, body, 200, `"actor":"admin-api"`)
}
