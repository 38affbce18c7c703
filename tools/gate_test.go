package tools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/tools"
	"github.com/switchboard-chat/switchboard/tools/exec"
	"github.com/switchboard-chat/switchboard/tools/toolstest"
)

// classed is a stand-in tool of one side-effect class.
type classed struct {
	named
	class tools.SideEffect
}

func (c classed) SideEffect() tools.SideEffect { return c.class }

// keyedTool's "Always allow" covers one host.
type keyedTool struct{ classed }

func (keyedTool) ApprovalKey(args json.RawMessage) string {
	var a struct{ URL string }
	_ = json.Unmarshal(args, &a)
	return strings.SplitN(strings.TrimPrefix(a.URL, "https://"), "/", 2)[0]
}

func TestGateDecisionsByClass(t *testing.T) {
	classes := map[string]string{"none": "allow", "read_only": "allow", "mutating": "ask", "network": "deny"}
	call := tools.Call{Agent: "ops", Session: "ops/telegram:1", UserID: "telegram:1", ToolCallID: "c1"}
	args := json.RawMessage(`{ "path" : "notes.txt" }`)
	cases := []struct {
		tool     tools.Tool
		decision tools.Decision
		wantRun  bool
		wantAsk  bool
		wantText string
	}{
		{tool: classed{named{name: "read_file"}, tools.SideEffectReadOnly}, wantRun: true},
		{tool: classed{named{name: "write_file"}, tools.SideEffectMutating}, decision: tools.AllowedOnce, wantRun: true, wantAsk: true},
		{tool: classed{named{name: "write_file"}, tools.SideEffectMutating}, decision: tools.Denied, wantAsk: true, wantText: "denied"},
		{tool: classed{named{name: "web_fetch"}, tools.SideEffectNetwork}, wantText: "side-effect class (network) is denied"},
		{tool: classed{named{name: "spawn"}, tools.SideEffectSpawns}, decision: tools.AllowedOnce, wantRun: true, wantAsk: true}, // unset class: ask
		{tool: exec.New(exec.Options{WorkspaceRoot: t.TempDir()}), wantRun: true},                                                // exec asks itself
	}
	for _, tc := range cases {
		approver := &toolstest.Approver{Decision: tc.decision}
		g := tools.Gate{Classes: classes, Approver: approver}
		res, ok := g.Check(context.Background(), call, tc.tool, args)
		_, reqs := approver.Calls()
		if ok != tc.wantRun || (len(reqs) > 0) != tc.wantAsk || !strings.Contains(res.ForLLM, tc.wantText) {
			t.Errorf("%s (%s): ran %v asked %d result %+v", tc.tool.Name(), tc.tool.SideEffect(), ok, len(reqs), res)
			continue
		}
		if tc.wantAsk {
			r := reqs[0]
			if r.Tool != tc.tool.Name() || r.Command != tc.tool.Name()+` {"path":"notes.txt"}` || r.Call != call ||
				r.Pattern != "ops\x00"+tc.tool.Name() {
				t.Errorf("request %+v: want the tool, its compact arguments, the call and an agent+tool pattern", r)
			}
		}
	}
}

func TestGateAlwaysAllowIsPerAgentToolAndKey(t *testing.T) {
	tool := keyedTool{classed{named{name: "web_fetch"}, tools.SideEffectNetwork}}
	approver := &toolstest.Approver{Decision: tools.Denied, Always: map[string]bool{"ops\x00web_fetch\x00example.com": true}}
	g := tools.Gate{Classes: map[string]string{"network": "ask"}, Approver: approver}
	run := func(agent, url string) bool {
		_, ok := g.Check(context.Background(), tools.Call{Agent: agent, ToolCallID: "x"}, tool, json.RawMessage(`{"url":"`+url+`"}`))
		return ok
	}
	if !run("ops", "https://example.com/a") {
		t.Error("an always-allowed host for this agent was asked")
	}
	if run("ops", "https://evil.example/a") || run("other", "https://example.com/a") {
		t.Error("always-allow leaked to another host or another agent")
	}
}
