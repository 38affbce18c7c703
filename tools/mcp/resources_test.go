package mcp_test

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/tools"
	"github.com/switchboard-chat/switchboard/tools/mcp"
	"github.com/switchboard-chat/switchboard/tools/mcp/mcptest"
)

// httpServer starts mcptest over streamable HTTP, stopped with the test.
func httpServer(t *testing.T, addr string, o mcptest.Options) *mcptest.HTTPServer {
	t.Helper()
	ts, err := mcptest.HTTPWith(addr, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ts.Close)
	return ts
}

// waitUp waits until the status says the server called name is up: its
// tools are registered before that, so a status read once they appear may
// still say down.
func waitUp(t *testing.T, b *mcp.Bridge, name string) {
	t.Helper()
	waitFor(t, name+" to be up", func() bool {
		return slices.ContainsFunc(b.Statuses(), func(s mcp.Status) bool { return s.Name == name && s.Up })
	})
}

// resources calls mcp_kit_resources with args and fails the test unless
// the result's error flag is wantErr.
func resources(t *testing.T, reg *tools.Registry, args string, wantErr bool) string {
	t.Helper()
	r := call(t, reg, "mcp_kit_resources", args)
	if r.IsError != wantErr {
		t.Fatalf("resources %s: error = %v, want %v: %s", args, r.IsError, wantErr, r.ForLLM)
	}
	return r.ForLLM
}

// TestBridgeResourcesListAndRead: a server that offers resources gets one
// read-only tool, mcp_kit_resources, in the server's groups; list names
// every resource with its type, size and description; read returns a
// text's contents (scrubbed of credentials), names a binary one without
// dumping it, cuts a long one saying so, and a failing read, an unknown
// URI or action and broken arguments get errors saying what to do.
func TestBridgeResourcesListAndRead(t *testing.T) {
	ts := httpServer(t, "127.0.0.1:0", mcptest.Options{})
	b, reg := newBridge(t)
	b.Add(mcp.Server{Name: "kit", Transport: "http", URL: ts.URL})
	waitUp(t, b, "kit")

	tl, _ := reg.Get("mcp_kit_resources")
	if tl.SideEffect() != tools.SideEffectReadOnly || !slices.Equal(tools.GroupsOf(tl), []string{"mcp", "mcp:kit"}) {
		t.Errorf("class %s, groups %v", tl.SideEffect(), tools.GroupsOf(tl))
	}
	var schema map[string]any
	if err := json.Unmarshal(tl.Parameters(), &schema); err != nil || schema["type"] != "object" {
		t.Errorf("parameters = %s (%v)", tl.Parameters(), err)
	}
	if st := b.Statuses(); len(st) != 1 || !st[0].Resources || st[0].Tools != 7 {
		t.Errorf("status = %+v; want 7 tools and resources", st)
	}

	list := resources(t, reg, `{"action":"list"}`, false)
	for _, want := range []string{
		"4 resources of MCP server kit",
		"- " + mcptest.ReadmeURI + " — readme (text/plain): the team's notes",
		"- " + mcptest.LogoURI + " — logo (image/png, 2.0 KB)",
		"- " + mcptest.BigURI + " — big (text/plain)",
		"- " + mcptest.BrokenURI + " — broken",
		"That is all of them",
	} {
		if !strings.Contains(list, want) {
			t.Errorf("list lacks %q:\n%s", want, list)
		}
	}

	readme := resources(t, reg, `{"action":"read","uri":"`+mcptest.ReadmeURI+`"}`, false)
	if !strings.Contains(readme, "[resource "+mcptest.ReadmeURI+", text/plain]\nmcptest notes: the deploy runs at 09:00 UTC") {
		t.Errorf("readme = %q", readme)
	}
	if strings.Contains(readme, mcptest.ReadmeSecret) {
		t.Errorf("a credential in a resource reached the model: %q", readme)
	}

	logo := resources(t, reg, `{"action":"read","uri":"`+mcptest.LogoURI+`"}`, false)
	if logo != "[resource "+mcptest.LogoURI+", image/png, 2.0 KB of binary contents, not shown]" {
		t.Errorf("logo = %q", logo)
	}

	big := resources(t, reg, `{"action":"read","uri":"`+mcptest.BigURI+`"}`, false)
	if len(big) > 64<<10+400 || !strings.Contains(big, "… (cut: the resource is longer than 64 KB, 102400 bytes of text; only the first 64 KB are shown") {
		t.Errorf("big: %d bytes, ends %q", len(big), big[max(0, len(big)-300):])
	}

	for args, want := range map[string]string{
		`{"action":"read","uri":"` + mcptest.BrokenURI + `"}`: "MCP server kit could not read \"" + mcptest.BrokenURI + "\"",
		`{"action":"read","uri":"mcptest://nowhere"}`:         `MCP server kit has no resource "mcptest://nowhere"`,
		`{"action":"read"}`:                     `read needs a "uri"`,
		`{"action":"delete","uri":"x"}`:         `unknown action "delete": pass {"action": "list"}`,
		`{"action":`:                            `invalid arguments: pass {"action": "list"}`,
		`{"action":"list","cursor":"not-ours"}`: "invalid cursor",
	} {
		if got := resources(t, reg, args, true); !strings.Contains(got, want) {
			t.Errorf("%s = %q; want it to contain %q", args, got, want)
		}
	}
	if got := resources(t, reg, `{"action":"read","uri":"`+mcptest.BrokenURI+`"}`, true); !strings.Contains(got, mcptest.BrokenError) {
		t.Errorf("the server's error is not passed on: %q", got)
	}
}

// cursorOf is the cursor a list result offers, "" when it says it is all.
func cursorOf(t *testing.T, list string) string {
	t.Helper()
	m := regexp.MustCompile(`"cursor": "([^"]+)"`).FindStringSubmatch(list)
	if m == nil {
		if !strings.Contains(list, "That is all of them") {
			t.Fatalf("the list neither ends nor offers a cursor:\n%s", list)
		}
		return ""
	}
	return m[1]
}

// TestBridgeResourcesPaginated: with more resources than one call shows,
// across server pages of 7, list shows 50 and a cursor, and the cursor
// shows the rest: every resource once, in the server's order, although
// the first call stopped in the middle of a server page.
func TestBridgeResourcesPaginated(t *testing.T) {
	ts := httpServer(t, "127.0.0.1:0", mcptest.Options{ExtraResources: 60, PageSize: 7})
	b, reg := newBridge(t)
	b.Add(mcp.Server{Name: "kit", Transport: "http", URL: ts.URL})
	waitFor(t, "the resources tool", func() bool { return has(reg, "mcp_kit_resources") })

	var uris []string
	args, calls := `{"action":"list"}`, 0
	for {
		list := resources(t, reg, args, false)
		for _, line := range strings.Split(list, "\n") {
			if uri, ok := strings.CutPrefix(line, "- "); ok {
				uris = append(uris, strings.Fields(uri)[0])
			}
		}
		calls++
		cursor := cursorOf(t, list)
		if calls == 1 && (cursor == "" || !strings.HasPrefix(list, "50 resources of MCP server kit")) {
			t.Fatalf("first list:\n%s", list)
		}
		if cursor == "" {
			break
		}
		if calls > 3 {
			t.Fatalf("still more after %d lists", calls)
		}
		args = `{"action":"list","cursor":"` + cursor + `"}`
	}
	want := []string{}
	for i := range 60 {
		want = append(want, mcptest.ExtraURI(i))
	}
	want = append(want, mcptest.LogoURI, mcptest.BigURI, mcptest.BrokenURI, mcptest.ReadmeURI)
	if calls != 2 || !slices.Equal(uris, want) {
		t.Errorf("%d lists gave %d resources:\n%v\nwant\n%v", calls, len(uris), uris, want)
	}
	if got := resources(t, reg, `{"action":"read","uri":"`+mcptest.ExtraURI(57)+`"}`, false); !strings.HasSuffix(got, "\nextra 57") {
		t.Errorf("extra 57 = %q", got)
	}
}

// TestBridgeResourcesNeedTheServersGrant: the resources tool is checked by
// the server's grants as its tool "resources": a person without a grant
// cannot list or read (the check runs in the gate and again in the tool),
// one with it can, and being read-only it is never asked about.
func TestBridgeResourcesNeedTheServersGrant(t *testing.T) {
	ts := httpServer(t, "127.0.0.1:0", mcptest.Options{})
	var asked []string
	reg := tools.NewRegistry(tools.RegistryOptions{})
	b := mcp.New(mcp.Options{Registry: reg, Permit: func(_ context.Context, call tools.Call, server, tool string) (string, bool) {
		asked = append(asked, server+"/"+tool)
		return "no grant for " + call.UserID, call.UserID == "telegram:1"
	}})
	t.Cleanup(b.Close)
	b.Add(mcp.Server{Name: "kit", Transport: "http", URL: ts.URL})
	waitFor(t, "the resources tool", func() bool { return has(reg, "mcp_kit_resources") })
	tl, _ := reg.Get("mcp_kit_resources")
	gate := tools.Gate{Classes: map[string]string{"none": "allow", "read_only": "allow", "mutating": "ask", "network": "ask"}}
	args := json.RawMessage(`{"action":"read","uri":"` + mcptest.ReadmeURI + `"}`)

	for _, user := range []string{"telegram:2", ""} {
		c := tools.Call{UserID: user, Agent: "a", Session: "a/test:1"}
		if res, ok := gate.Check(context.Background(), c, tl, args); ok || !strings.Contains(res.ForLLM, "no grant for "+user) {
			t.Errorf("the gate let %q through: %+v", user, res)
		}
		res := reg.Execute(context.Background(), c, "mcp_kit_resources", args)
		if !res.IsError || strings.Contains(res.ForLLM, "09:00") {
			t.Errorf("%q read the resource without a grant: %+v", user, res)
		}
	}
	c := tools.Call{UserID: "telegram:1", Agent: "a", Session: "a/test:1"}
	if res, ok := gate.Check(context.Background(), c, tl, args); !ok {
		t.Fatalf("the gate stopped a granted read: %+v", res)
	}
	if res := reg.Execute(context.Background(), c, "mcp_kit_resources", args); res.IsError || !strings.Contains(res.ForLLM, "09:00 UTC") {
		t.Errorf("granted read = %+v", res)
	}
	if !slices.Contains(asked, "kit/resources") || slices.ContainsFunc(asked, func(s string) bool { return s != "kit/resources" }) {
		t.Errorf("the grant check was asked about %v; want kit/resources", asked)
	}
}

// TestBridgeResourcesOnlyWhenOffered: a server without the resources
// capability gets no resources tool (its tools are bridged as ever), nor
// does one whose tools.deny names "resources"; a server that comes back
// without resources after a restart loses the tool, and its tools return.
func TestBridgeResourcesOnlyWhenOffered(t *testing.T) {
	plain := httpServer(t, "127.0.0.1:0", mcptest.Options{NoResources: true})
	withRes := httpServer(t, "127.0.0.1:0", mcptest.Options{})
	addr := withRes.Listener.Addr().String()
	b, reg := newBridge(t)
	b.Add(mcp.Server{Name: "plain", Transport: "http", URL: plain.URL})
	b.Add(mcp.Server{Name: "denied", Transport: "http", URL: withRes.URL, Deny: []string{mcp.ResourcesTool}})
	b.Add(mcp.Server{Name: "kit", Transport: "http", URL: withRes.URL})
	for _, name := range []string{"plain", "denied", "kit"} {
		waitUp(t, b, name)
	}
	if !has(reg, "mcp_kit_resources") || !has(reg, "mcp_plain_echo") || !has(reg, "mcp_denied_echo") {
		t.Fatal("tools missing once the servers are up")
	}
	if has(reg, "mcp_plain_resources") || has(reg, "mcp_denied_resources") {
		t.Error("a resources tool was bridged for a server without resources or with it denied")
	}
	for _, st := range b.Statuses() {
		if st.Resources != (st.Name == "kit") {
			t.Errorf("status %+v", st)
		}
	}

	withRes.Close()
	waitFor(t, "the tools to be withdrawn", func() bool { return !has(reg, "mcp_kit_resources") && !has(reg, "mcp_kit_echo") })
	httpServer(t, addr, mcptest.Options{NoResources: true})
	waitUp(t, b, "kit")
	if !has(reg, "mcp_kit_echo") || has(reg, "mcp_kit_resources") {
		t.Error("after the restart without resources: echo missing, or the resources tool came back")
	}
	if st := b.Statuses(); !slices.ContainsFunc(st, func(s mcp.Status) bool { return s.Name == "kit" && s.Up && !s.Resources }) {
		t.Errorf("status after the restart = %+v", st)
	}
}
