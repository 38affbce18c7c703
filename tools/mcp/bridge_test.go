package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/tools"
	"github.com/switchboard-chat/switchboard/tools/mcp"
	"github.com/switchboard-chat/switchboard/tools/mcp/mcptest"
)

func TestMain(m *testing.M) {
	mcptest.ServeStdioIfAsked()
	os.Exit(m.Run())
}

func newBridge(t *testing.T) (*mcp.Bridge, *tools.Registry) {
	reg := tools.NewRegistry(tools.RegistryOptions{})
	b := mcp.New(mcp.Options{Registry: reg, Health: 100 * time.Millisecond, MinBackoff: 50 * time.Millisecond,
		MaxBackoff: 200 * time.Millisecond, Timeout: 10 * time.Second})
	t.Cleanup(b.Close)
	return b, reg
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func has(reg *tools.Registry, name string) bool {
	_, ok := reg.Get(name)
	return ok
}

func call(t *testing.T, reg *tools.Registry, name, args string) tools.Result {
	t.Helper()
	return reg.Execute(context.Background(), tools.Call{Session: "a/test:1", Agent: "a"}, name, json.RawMessage(args))
}

// TestBridgeHTTP: a streamable-HTTP server's tools are registered as
// mcp_<server>_<tool> in groups mcp and mcp:<server>, with side-effect
// classes from their annotations, minus the denied ones; they work; when
// the server dies they are withdrawn, and they come back with it.
func TestBridgeHTTP(t *testing.T) {
	ts, err := mcptest.HTTP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ts.Listener.Addr().String()
	b, reg := newBridge(t)
	b.Add(mcp.Server{Name: "kit", Transport: "http", URL: ts.URL, Deny: []string{"child"}})
	waitFor(t, "the tools", func() bool { return has(reg, "mcp_kit_echo") })

	want := map[string]tools.SideEffect{
		"mcp_kit_echo": tools.SideEffectReadOnly, "mcp_kit_search": tools.SideEffectNetwork,
		"mcp_kit_delete_all": tools.SideEffectMutating, "mcp_kit_plain": tools.SideEffectMutating,
	}
	for name, class := range want {
		tl, ok := reg.Get(name)
		if !ok {
			t.Fatalf("%s not registered", name)
		}
		if tl.SideEffect() != class {
			t.Errorf("%s class = %s, want %s", name, tl.SideEffect(), class)
		}
		g, ok := tl.(tools.Grouped)
		if !ok || !slices.Equal(g.Groups(), []string{"mcp", "mcp:kit"}) {
			t.Errorf("%s groups = %v", name, g)
		}
	}
	if has(reg, "mcp_kit_child") {
		t.Error("a denied tool was bridged")
	}
	// Policy sees them by group.
	allowed := tools.Policy{Global: tools.PolicyRules{Allow: []string{"group:mcp:kit"}, Deny: []string{"mcp_kit_delete_all"}}}.Allowed(reg.All())
	if !allowed["mcp_kit_echo"] || allowed["mcp_kit_delete_all"] {
		t.Errorf("policy by group = %v", allowed)
	}
	if r := call(t, reg, "mcp_kit_echo", `{"text":"hi"}`); r.IsError || r.ForLLM != "echo: hi" {
		t.Fatalf("echo = %+v", r)
	}

	ts.Close()
	waitFor(t, "the tools to be withdrawn", func() bool { return !has(reg, "mcp_kit_echo") })
	if st := b.Statuses(); len(st) != 1 || st[0].Up || st[0].LastError == "" {
		t.Errorf("status while down = %+v", st)
	}
	ts2, err := mcptest.HTTP(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ts2.Close()
	waitFor(t, "the tools to come back", func() bool { return has(reg, "mcp_kit_echo") })
	if r := call(t, reg, "mcp_kit_echo", `{"text":"again"}`); r.ForLLM != "echo: again" {
		t.Fatalf("echo after the restart = %+v", r)
	}
}

// stdioServer runs this test binary as a stdio MCP server.
func stdioServer(name string, env map[string]string) mcp.Server {
	env[mcptest.StdioEnv] = "1"
	return mcp.Server{Name: name, Transport: "stdio", Command: []string{os.Args[0], "-test.run=^$"}, Env: env}
}

// TestBridgeStdio: a stdio server gets a clean environment plus its own
// variables (names keep their case; none of the daemon's leak in); its
// resources can be read; killed,
// it is restarted and its tools come back; stopped, it and its children
// are gone — even one that ignores a closed stdin and SIGTERM.
func TestBridgeStdio(t *testing.T) {
	t.Setenv("SWITCHBOARD_LLM_API_KEY", "daemon-secret")
	b, reg := newBridge(t)
	b.Add(stdioServer("local", map[string]string{"Region_Name": "eu-West-1", mcptest.StubbornEnv: "1"}))
	waitFor(t, "the stdio tools", func() bool { return has(reg, "mcp_local_env") })

	env := call(t, reg, "mcp_local_env", `{}`).ForLLM
	if !strings.Contains("\n"+env+"\n", "\nRegion_Name=eu-West-1\n") || !strings.Contains(env, "PATH=") {
		t.Errorf("server env lacks its variables:\n%s", env)
	}
	if strings.Contains(env, "daemon-secret") || strings.Contains(env, "HOME=") {
		t.Errorf("the daemon's environment leaked into the server:\n%s", env)
	}

	// Its resources are read over stdio too.
	if r := call(t, reg, "mcp_local_resources", `{"action":"read","uri":"`+mcptest.ReadmeURI+`"}`); r.IsError || !strings.Contains(r.ForLLM, "09:00 UTC") {
		t.Errorf("resource over stdio = %+v", r)
	}

	pid, err := strconv.Atoi(call(t, reg, "mcp_local_pid", `{}`).ForLLM)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a new server process", func() bool {
		r := call(t, reg, "mcp_local_pid", `{}`)
		n, err := strconv.Atoi(r.ForLLM)
		return err == nil && n != pid
	})

	server, _ := strconv.Atoi(call(t, reg, "mcp_local_pid", `{}`).ForLLM)
	child, err := strconv.Atoi(call(t, reg, "mcp_local_child", `{}`).ForLLM)
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	for _, p := range []int{server, child} {
		waitFor(t, "process "+strconv.Itoa(p)+" to be gone", func() bool { return gone(p) })
	}
	if has(reg, "mcp_local_env") {
		t.Error("tools of a stopped server are still registered")
	}
}

// gone reports whether pid no longer runs (reaped, or a zombie of init's).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err != nil || strings.Contains(string(raw), ") Z ")
}

// TestBridgeSSE: a server on the SSE transport is bridged too.
func TestBridgeSSE(t *testing.T) {
	ts := mcptest.SSE()
	defer ts.Close()
	b, reg := newBridge(t)
	b.Add(mcp.Server{Name: "old", Transport: "sse", URL: ts.URL})
	waitFor(t, "the SSE tools", func() bool { return has(reg, "mcp_old_echo") })
	if r := call(t, reg, "mcp_old_echo", `{"text":"over sse"}`); r.ForLLM != "echo: over sse" {
		t.Fatalf("echo = %+v", r)
	}
}

// approverFunc answers approvals in tests.
type approverFunc func(tools.ApprovalRequest) tools.Decision

func (f approverFunc) AlwaysAllowed(context.Context, string, string) (bool, error) { return false, nil }
func (f approverFunc) Approve(_ context.Context, r tools.ApprovalRequest) (tools.Decision, error) {
	return f(r), nil
}

// TestBridgeAnnotationsDriveApprovals: with the default class decisions a
// read-only tool runs at once, a destructive or unannotated one is asked
// about (and does not run when denied); the grant check comes first.
func TestBridgeAnnotationsDriveApprovals(t *testing.T) {
	ts, err := mcptest.HTTP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	var asked []string
	gate := tools.Gate{
		Classes: map[string]string{"none": "allow", "read_only": "allow", "mutating": "ask", "network": "ask"},
		Approver: approverFunc(func(r tools.ApprovalRequest) tools.Decision {
			asked = append(asked, r.Tool)
			return tools.Denied
		}),
	}
	reg := tools.NewRegistry(tools.RegistryOptions{})
	b := mcp.New(mcp.Options{Registry: reg, Permit: func(_ context.Context, call tools.Call, server, tool string) (string, bool) {
		return "no grant for " + call.UserID, call.UserID == "telegram:1"
	}})
	t.Cleanup(b.Close)
	b.Add(mcp.Server{Name: "kit", Transport: "http", URL: ts.URL})
	waitFor(t, "the tools", func() bool { return has(reg, "mcp_kit_delete_all") })
	check := func(user, name string) (tools.Result, bool) {
		tl, _ := reg.Get(name)
		return gate.Check(context.Background(), tools.Call{UserID: user, Agent: "a", Session: "a/test:1"}, tl, json.RawMessage(`{}`))
	}
	if _, ok := check("telegram:1", "mcp_kit_echo"); !ok || len(asked) != 0 {
		t.Fatalf("a read-only tool was stopped or asked about: %v", asked)
	}
	for _, name := range []string{"mcp_kit_delete_all", "mcp_kit_plain", "mcp_kit_search"} {
		if res, ok := check("telegram:1", name); ok || !res.IsError {
			t.Errorf("%s ran although its approval was denied", name)
		}
	}
	if want := []string{"mcp_kit_delete_all", "mcp_kit_plain", "mcp_kit_search"}; !slices.Equal(asked, want) {
		t.Errorf("asked about %v; want %v", asked, want)
	}
	if res, ok := check("telegram:2", "mcp_kit_echo"); ok || !strings.Contains(res.ForLLM, "no grant for telegram:2") {
		t.Errorf("a call without a grant got through: %+v", res)
	}
}
