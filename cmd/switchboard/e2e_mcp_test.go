package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/tools/mcp/mcptest"
)

// TestE2EMCPGrantApprovedInChat: through the binary, an MCP server's tool
// is offered as mcp_kit_echo; a person without a grant gets a refusal the
// model can explain and the admin gets Approve / Deny buttons; after the
// admin approves, the person is told and the same call works. Another
// tool of the server stays ungranted. /status shows the server. Its
// resources tool asks for a grant the same way, and then reads.
func TestE2EMCPGrantApprovedInChat(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	srv, err := mcptest.HTTP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close) // after the daemon stops (cleanups run last-in first-out)
	tg, llm := fakes(t)
	llm.Handle(toolBrain(map[string]func(string) llmtest.ToolCall{
		"echo": func(text string) llmtest.ToolCall {
			return llmtest.ToolCall{Name: "mcp_kit_echo", Arguments: `{"text":"` + text + `"}`}
		},
		"search": func(string) llmtest.ToolCall { return llmtest.ToolCall{Name: "mcp_kit_search", Arguments: `{}`} },
		"read": func(uri string) llmtest.ToolCall {
			return llmtest.ToolCall{Name: "mcp_kit_resources", Arguments: `{"action":"read","uri":"` + uri + `"}`}
		},
	}, func(r llmtest.Request) string { return "offered: " + strings.Join(r.Tools, ",") }))
	env := approvalEnv(t, tg, llm, "")
	env["SWITCHBOARD_HTTP_ADMIN_TOKEN"] = "e2e-admin-token"
	d := startReplica(ctx, t, env, `mcp:
  servers:
    - name: kit
      transport: http
      url: "`+srv.URL+`"
      tools: {deny: [child, env, pid]}
`)
	const user = 7272
	ask := func(text, want string) {
		t.Helper()
		after := lastID(tg, user)
		tg.SendText(user, user, "Uma", text)
		newReplyContaining(ctx, t, tg, user, after, want)
	}
	// The server connects in the background: wait until its tools are offered.
	eventually(ctx, t, "the MCP tools to be offered", func() bool {
		after := lastID(tg, user)
		tg.SendText(user, user, "Uma", "what tools?")
		m := newReplyContaining(ctx, t, tg, user, after, "offered:")
		return strings.Contains(m.Visible, "mcp_kit_echo")
	})
	adminBefore := lastID(tg, admin)
	ask("echo hello", "is not granted to telegram:7272 yet; I asked the admins")
	req := newReplyContaining(ctx, t, tg, admin, adminBefore, "Tool access request")
	if !strings.Contains(req.Visible, "default wants mcp:kit for telegram:7272 — tools: echo") {
		t.Errorf("request card = %q", req.Visible)
	}
	// Asking again files nothing new.
	ask("echo hello", "is waiting for an admin")

	after := lastID(tg, user)
	tg.PressButton(admin, user, req.ID, buttonOn(t, req, "Approve")) // not an admin: refused
	tg.PressButton(admin, admin, req.ID, buttonOn(t, req, "Approve"))
	newReplyContaining(ctx, t, tg, user, after, "An admin granted echo of mcp:kit to telegram:7272")
	ask("echo hello", "tool said: echo: hello")

	// The grant is for echo only.
	ask("search", "search of mcp:kit is not granted to telegram:7272 yet")
	ask("/status", "MCP kit (http): 4 tools, resources")

	// The server's resources are under its grants too, as its tool
	// "resources"; granted, a read returns the text, scrubbed.
	adminBefore = lastID(tg, admin)
	ask("read "+mcptest.ReadmeURI, "resources of mcp:kit is not granted to telegram:7272 yet")
	req = newReplyContaining(ctx, t, tg, admin, adminBefore, "tools: resources")
	after = lastID(tg, user)
	tg.PressButton(admin, admin, req.ID, buttonOn(t, req, "Approve"))
	newReplyContaining(ctx, t, tg, user, after, "An admin granted resources of mcp:kit to telegram:7272")
	after = lastID(tg, user)
	tg.SendText(user, user, "Uma", "read "+mcptest.ReadmeURI)
	if m := newReplyContaining(ctx, t, tg, user, after, "tool said: [resource "+mcptest.ReadmeURI+", text/plain]"); !strings.Contains(m.Visible, "09:00 UTC") ||
		strings.Contains(m.Visible, mcptest.ReadmeSecret) {
		t.Errorf("the resource as read through the daemon: %q", m.Visible)
	}

	// A server added through the admin API is connected without a restart,
	// and gone when deleted.
	extra, err := mcptest.HTTP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(extra.Close)
	if code, body := adminCall(t, d, "POST", "/api/v1/mcp/servers", "wrong-token",
		`{"name":"extra","transport":"http","url":"`+extra.URL+`"}`); code != 401 {
		t.Fatalf("without the token: %d %s", code, body)
	}
	if code, body := adminCall(t, d, "POST", "/api/v1/mcp/servers", "e2e-admin-token",
		`{"name":"extra","transport":"http","url":"`+extra.URL+`","tools":{"allow":["echo"]},"grants":{"users":["telegram:7272"]}}`); code != 201 {
		t.Fatalf("add server: %d %s", code, body)
	}
	eventually(ctx, t, "the added server's tools", func() bool {
		_, body := adminCall(t, d, "GET", "/api/v1/mcp/servers", "e2e-admin-token", "")
		return strings.Contains(body, `"name":"extra","transport":"http","up":true,"tools":1`)
	})
	ask("/status", "MCP extra (http): 1 tools")
	if code, body := adminCall(t, d, "DELETE", "/api/v1/mcp/servers/extra", "e2e-admin-token", ""); code != 204 {
		t.Fatalf("delete server: %d %s", code, body)
	}
	if code, body := adminCall(t, d, "DELETE", "/api/v1/mcp/servers/kit", "e2e-admin-token", ""); code != 400 || !strings.Contains(body, "config file") {
		t.Fatalf("deleting a configured server: %d %s", code, body)
	}
	after = lastID(tg, user)
	tg.SendText(user, user, "Uma", "/status")
	if m := newReplyContaining(ctx, t, tg, user, after, "MCP kit"); strings.Contains(m.Visible, "MCP extra") {
		t.Fatalf("a deleted server is still listed: %q", m.Visible)
	}
}

// adminCall makes one admin API request to d.
func adminCall(t *testing.T, d *daemonProc, method, path, token, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, "http://"+d.http+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
