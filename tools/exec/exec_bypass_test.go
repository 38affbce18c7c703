package exec_test

import (
	"testing"

	"github.com/switchboard-chat/switchboard/tools"
	"github.com/switchboard-chat/switchboard/tools/exec"
	"github.com/switchboard-chat/switchboard/tools/shellguard/shellguardtest"
	"github.com/switchboard-chat/switchboard/tools/toolstest"
)

// TestExecNeverRunsBypassesUnasked sends every bypass attempt through the
// exec tool in ask mode with approvers who deny everything. Each must be
// blocked without reaching the approvers, or reach them and be denied;
// none may start the (fake, recording) shell.
func TestExecNeverRunsBypassesUnasked(t *testing.T) {
	shell, canary := fakeShell(t)
	root := t.TempDir()
	for _, tc := range shellguardtest.BypassCases {
		approver := &toolstest.Approver{Decision: tools.Denied}
		e := exec.New(exec.Options{Logger: discard, WorkspaceRoot: root, Approver: approver, Shell: shell})
		res := e.Execute(toolstest.Context(), execArgs(t, tc.Cmd, nil))
		asked, requests := approver.Calls()
		if !res.IsError {
			t.Errorf("%q: result is not an error: %q", tc.Cmd, res.ForLLM)
		}
		if tc.Want != shellguardtest.AskHuman {
			if res.ForLLM != "blocked by safety policy: "+tc.Want {
				t.Errorf("%q: got %q, want blocked as %q", tc.Cmd, res.ForLLM, tc.Want)
			}
			if asked != 0 || len(requests) != 0 {
				t.Errorf("%q: blocked command reached the approver (%d lookups, %d requests)", tc.Cmd, asked, len(requests))
			}
			continue
		}
		if len(requests) != 1 || requests[0].Command != tc.Cmd {
			t.Errorf("%q: approver requests %+v, want exactly one for the command", tc.Cmd, requests)
		}
		if res.ForLLM != "the approvers denied this command" {
			t.Errorf("%q: got %q, want the denial", tc.Cmd, res.ForLLM)
		}
	}
	if ran := ranCommands(t, canary); len(ran) > 0 {
		t.Fatalf("the shell was started for %d commands without approval: %q", len(ran), ran)
	}
}

// TestExecRunsBenignAfterApproval checks the other side: benign commands
// reach the approvers and, once allowed, are handed to the shell verbatim.
func TestExecRunsBenignAfterApproval(t *testing.T) {
	shell, canary := fakeShell(t)
	root := t.TempDir()
	var want []string
	for _, cmd := range shellguardtest.Benign {
		if containsNewline(cmd) {
			continue // the fake shell's log is line-based
		}
		approver := &toolstest.Approver{Decision: tools.AllowedOnce}
		e := exec.New(exec.Options{Logger: discard, WorkspaceRoot: root, Approver: approver, Shell: shell})
		res := e.Execute(toolstest.Context(), execArgs(t, cmd, nil))
		if res.IsError {
			t.Errorf("%q: %q", cmd, res.ForLLM)
		}
		if _, requests := approver.Calls(); len(requests) != 1 {
			t.Errorf("%q: %d approval requests, want 1", cmd, len(requests))
		}
		want = append(want, cmd)
	}
	ran := ranCommands(t, canary)
	if len(ran) != len(want) {
		t.Fatalf("shell ran %d commands, want %d", len(ran), len(want))
	}
	for i := range want {
		if ran[i] != want[i] {
			t.Errorf("shell got %q, want %q", ran[i], want[i])
		}
	}
}

func containsNewline(s string) bool {
	for _, r := range s {
		if r == '\n' {
			return true
		}
	}
	return false
}
