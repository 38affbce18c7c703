package exec_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/tools"
	"github.com/switchboard-chat/switchboard/tools/exec"
	"github.com/switchboard-chat/switchboard/tools/toolstest"
)

// TestNoApproverHintNamesThePersonsPlatform: the hint that says how to
// become an approver gives an identity on the platform the person is on —
// console:local, exactly, in the console — never a Telegram one elsewhere.
func TestNoApproverHintNamesThePersonsPlatform(t *testing.T) {
	tests := []struct {
		name, channel, user, want string
	}{
		{"console", "console", "console:local", "SWITCHBOARD_ADMINS=console:local"},
		{"slack", "slack", "slack:U1", "SWITCHBOARD_ADMINS=slack:<your user id>"},
		{"discord", "discord", "discord:9", "SWITCHBOARD_ADMINS=discord:<your user id>"},
		{"telegram", "telegram", "telegram:7", "SWITCHBOARD_ADMINS=telegram:<your user id>"},
		{"platform only in the user id", "", "slack:U1", "SWITCHBOARD_ADMINS=slack:<your user id>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call := tools.Call{Channel: tt.channel, ChatID: "c", UserID: tt.user, Session: "s", Agent: "main", ToolCallID: "call-1"}
			approver := &toolstest.Approver{ApproveErr: tools.ErrNoApprover}
			res := exec.New(exec.Options{Logger: discard, WorkspaceRoot: t.TempDir(), Approver: approver}).
				Execute(tools.WithCall(context.Background(), call), execArgs(t, "touch x", nil))
			if !res.IsError || !strings.Contains(res.ForLLM, tt.want) {
				t.Errorf("result = %q, want it to name %s", res.ForLLM, tt.want)
			}
			if tt.channel != "telegram" && strings.Contains(res.ForLLM, "telegram:") {
				t.Errorf("a Telegram identity for %s: %q", tt.user, res.ForLLM)
			}
		})
	}
}
