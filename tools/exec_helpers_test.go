package tools_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-chat/switchboard/tools"
)

// recordingApprover records what exec asks and answers with a fixed
// decision.
type recordingApprover struct {
	mu         sync.Mutex
	decision   tools.Decision
	always     map[string]bool
	alwaysErr  error
	approveErr error
	block      bool // Approve waits for ctx to end
	asked      []string
	requests   []tools.ApprovalRequest
}

func (a *recordingApprover) AlwaysAllowed(_ context.Context, tool, pattern string) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, tool+"\x00"+pattern)
	return a.always[pattern], a.alwaysErr
}

func (a *recordingApprover) Approve(ctx context.Context, req tools.ApprovalRequest) (tools.Decision, error) {
	a.mu.Lock()
	a.requests = append(a.requests, req)
	block := a.block
	a.mu.Unlock()
	if block {
		<-ctx.Done()
		return tools.Denied, ctx.Err()
	}
	return a.decision, a.approveErr
}

func (a *recordingApprover) calls() (asked int, requests []tools.ApprovalRequest) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.asked), append([]tools.ApprovalRequest(nil), a.requests...)
}

// discard silences the exec tool's logs in tests.
var discard = slog.New(slog.DiscardHandler)

// testCall is the conversation exec calls run in.
var testCall = tools.Call{
	Channel: "telegram", ChatID: "42", PeerKind: "group", UserID: "telegram:7",
	Session: "telegram:42", Agent: "main", ToolCallID: "call-1",
}

func callCtx() context.Context { return tools.WithCall(context.Background(), testCall) }

// execArgs encodes exec arguments.
func execArgs(t *testing.T, command string, extra map[string]any) json.RawMessage {
	t.Helper()
	m := map[string]any{"command": command}
	for k, v := range extra {
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// workspaceOf returns the (symlink-free) workspace the exec tool uses for
// testCall under root.
func workspaceOf(t *testing.T, root string) string {
	t.Helper()
	ws := tools.WorkspaceDir(root, testCall.Session)
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(ws)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// fakeShell writes a stand-in for /bin/sh that only records that it was
// started, so dangerous commands can go through the exec tool safely. It
// returns the shell's path and the canary file it appends to.
func fakeShell(t *testing.T) (shell, canary string) {
	t.Helper()
	dir := t.TempDir()
	canary = filepath.Join(dir, "ran")
	shell = filepath.Join(dir, "fakesh")
	script := "#!/bin/sh\nprintf '%s\\n' \"$2\" >> '" + canary + "'\n"
	if err := os.WriteFile(shell, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return shell, canary
}

// ranCommands returns what the fake shell was asked to run.
func ranCommands(t *testing.T, canary string) []string {
	t.Helper()
	b, err := os.ReadFile(canary)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}
