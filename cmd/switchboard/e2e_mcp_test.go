package main

import (
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
// tool of the server stays ungranted. /status shows the server.
func TestE2EMCPGrantApprovedInChat(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	srv, err := mcptest.HTTP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close) // after the daemon stops (cleanups run last-in first-out)
	tg, llm := fakes(t)
	llm.Handle(func(r llmtest.Request) llmtest.Reply {
		last := r.Messages[len(r.Messages)-1]
		switch {
		case last.Role == "tool":
			return llmtest.Reply{Text: "tool said: " + last.Content}
		case strings.HasPrefix(last.Content, "echo "):
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "mcp_kit_echo",
				Arguments: `{"text":"` + strings.TrimPrefix(last.Content, "echo ") + `"}`}}}
		case last.Content == "search":
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "mcp_kit_search", Arguments: `{}`}}}
		}
		return llmtest.Reply{Text: "offered: " + strings.Join(r.Tools, ",")}
	})
	env := approvalEnv(t, tg, llm, "")
	startReplica(ctx, t, env, `mcp:
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
	ask("/status", "MCP kit (http): 4 tools")
}
