package exec_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/switchboard-chat/switchboard/tools/exec"
	"github.com/switchboard-chat/switchboard/tools/toolstest"
)

// TestExecRunsAsTheUnprivilegedUser: with RunAs, a command runs as that
// account with no supplementary groups, in a workspace it owns, and cannot
// write outside it (here: the workspace root, which stays root's).
func TestExecRunsAsTheUnprivilegedUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("switching users needs root; this test runs as root in CI")
	}
	u, err := exec.LookupExecUser("nobody")
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(reachableTempDir(t), "workspaces")
	e := exec.New(exec.Options{Logger: discard, WorkspaceRoot: root, Mode: exec.ExecModeAllow, RunAs: u})
	res := e.Execute(toolstest.Context(), execArgs(t, `id -u; id -G; touch mine && echo wrote; touch ../escape 2>/dev/null || echo refused`, nil))
	if res.IsError {
		t.Fatalf("exec failed: %s", res.ForLLM)
	}
	lines := strings.Fields(res.ForLLM)
	want := []string{"65534", "65534", "wrote", "refused"}
	for i, w := range want {
		if i >= len(lines) || lines[i] != w {
			t.Fatalf("output = %q, want it to start with %q", res.ForLLM, want)
		}
	}
	ws := workspaceOf(t, root)
	info, err := os.Stat(filepath.Join(ws, "mine"))
	if err != nil {
		t.Fatal(err)
	}
	if st := info.Sys().(*syscall.Stat_t); st.Uid != u.UID {
		t.Fatalf("the file the command wrote is owned by uid %d, want %d", st.Uid, u.UID)
	}
	if _, err := os.Stat(filepath.Join(root, "escape")); err == nil {
		t.Fatal("the command wrote into the workspace root")
	}
}

func TestLookupExecUser(t *testing.T) {
	if _, err := exec.LookupExecUser("root"); err == nil || !strings.Contains(err.Error(), "unprivileged") {
		t.Fatalf("root accepted as exec user: %v", err)
	}
	if _, err := exec.LookupExecUser("no-such-user-x1"); err == nil || !strings.Contains(err.Error(), "exec.user") {
		t.Fatalf("unknown user: %v", err)
	}
	if u, err := exec.LookupExecUser("65534"); err != nil || u.UID != 65534 {
		t.Fatalf("numeric uid: %+v, %v", u, err)
	}
}

func TestCanReach(t *testing.T) {
	u := &exec.ExecUser{Name: "nobody", UID: 65534, GID: 65534}
	base := reachableTempDir(t)
	open := filepath.Join(base, "open")
	closed := filepath.Join(base, "closed", "inner")
	for _, d := range []string{open, closed} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(base, 0o711); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(closed), 0o700); err != nil {
		t.Fatal(err)
	}
	if !u.CanReach(open) {
		t.Errorf("%s should be reachable", open)
	}
	if u.CanReach(closed) {
		t.Errorf("%s is behind a 0700 directory", closed)
	}
}

// reachableTempDir is a temporary directory every user can pass through
// (t.TempDir's parent is private to the test's user).
func reachableTempDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "sb-exec-user-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(d) })
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestExecRefusesAnUnreachableWorkspace: when the exec user cannot reach
// the workspace root, the call says so instead of failing obscurely.
func TestExecRefusesAnUnreachableWorkspace(t *testing.T) {
	u := &exec.ExecUser{Name: "nobody", UID: 65534, GID: 65534}
	e := exec.New(exec.Options{Logger: discard, WorkspaceRoot: filepath.Join(t.TempDir(), "ws"), Mode: exec.ExecModeAllow, RunAs: u})
	res := e.Execute(toolstest.Context(), execArgs(t, "id", nil))
	if !res.IsError || !strings.Contains(res.ForLLM, "cannot reach") {
		t.Fatalf("result = %q", res.ForLLM)
	}
}
