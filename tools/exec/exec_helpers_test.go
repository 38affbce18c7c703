package exec_test

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/tools/exec"
	"github.com/switchboard-chat/switchboard/tools/toolstest"
)

// discard silences the exec tool's logs in tests.
var discard = slog.New(slog.DiscardHandler)

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
// toolstest.Call under root.
func workspaceOf(t *testing.T, root string) string {
	t.Helper()
	ws := exec.WorkspaceDir(root, toolstest.Call.Session)
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
