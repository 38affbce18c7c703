package exec_test

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboard-chat/switchboard/tools"
	"github.com/switchboard-chat/switchboard/tools/exec"
	"github.com/switchboard-chat/switchboard/tools/toolstest"
)

// sandboxOrSkip returns a working bubblewrap sandbox; without one the test
// is skipped with the reason, except in CI, which installs bubblewrap.
func sandboxOrSkip(t *testing.T) *exec.Sandbox {
	t.Helper()
	sb, why, err := exec.FindSandbox(exec.SandboxAuto, false, nil)
	if err != nil || sb == nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI must run the sandbox tests: %s %v (.ci/run installs bubblewrap)", why, err)
		}
		t.Skipf("SKIPPED LOUDLY: no usable bubblewrap here (%s %v); install the bubblewrap package to run this test", why, err)
	}
	return sb
}

// TestSandboxConfinesCommands: inside bubblewrap a command writes its
// workspace and nothing else, does not see the machine's other files,
// reaches no network (the same command without the sandbox does), and has
// its own PIDs.
func TestSandboxConfinesCommands(t *testing.T) {
	sb := sandboxOrSkip(t)
	root := t.TempDir()
	ws := workspaceOf(t, root)
	outside := t.TempDir() // stands for data_dir: secrets, config
	secret := filepath.Join(outside, "postgres.password")
	if err := os.WriteFile(secret, []byte("hunter2"), 0o600); err != nil {
		t.Fatal(err)
	}
	var hits atomic.Int32
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			hits.Add(1)
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	dial := "curl -s -m 3 -o /dev/null http://127.0.0.1:" + itoa(port) + "/ && echo connected"

	boxed := exec.New(exec.Options{Logger: discard, WorkspaceRoot: root, Mode: exec.ExecModeAllow, Sandbox: sb})
	run := func(e *exec.Exec, command string) tools.Result {
		return e.Execute(toolstest.Context(), execArgs(t, command, nil))
	}
	if r := run(boxed, "echo inside > made.txt && cat made.txt"); r.IsError || !strings.Contains(r.ForLLM, "inside") {
		t.Fatalf("writing the workspace failed: %+v", r)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "made.txt")); err != nil || string(b) != "inside\n" {
		t.Fatalf("the workspace file = %q, %v", b, err)
	}
	for _, c := range []string{
		"touch " + filepath.Join(outside, "planted"),
		"cat " + secret,
		"touch /etc/planted",
		"touch /usr/planted",
		dial,
	} {
		if r := run(boxed, c); !r.IsError || strings.Contains(r.ForLLM, "hunter2") || strings.Contains(r.ForLLM, "connected") {
			t.Errorf("inside the sandbox %q = %+v; want it to fail", c, r)
		}
	}
	for _, p := range []string{filepath.Join(outside, "planted"), "/etc/planted", "/usr/planted"} {
		if _, err := os.Stat(p); err == nil {
			os.Remove(p)
			t.Errorf("a sandboxed command wrote %s", p)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("a sandboxed command reached the network (%d connections)", n)
	}
	if r := run(boxed, "cut -d' ' -f1 /proc/self/stat"); r.IsError || len(strings.TrimSpace(strings.Split(r.ForLLM, "\n")[0])) > 2 {
		t.Errorf("the sandbox has no PID namespace of its own: %+v", r)
	}
	// Control: the same dial without the sandbox connects, so the check
	// above can fail.
	open := exec.New(exec.Options{Logger: discard, WorkspaceRoot: root, Mode: exec.ExecModeAllow})
	run(open, dial) // the listener hangs up at once: curl itself reports an empty reply
	if hits.Load() == 0 {
		t.Fatal("without the sandbox the dial did not connect either (is curl installed?); the test proves nothing")
	}
	// Background processes run in it too.
	procs := exec.NewProcesses(boxed)
	defer procs.Close()
	res := procs.Execute(toolstest.Context(), json.RawMessage(`{"action":"start","command":"touch `+filepath.Join(outside, "bg")+` || echo refused"}`))
	id := procID.FindStringSubmatch(res.ForLLM)
	if id == nil {
		t.Fatalf("start = %+v", res)
	}
	waitUntilTrue(t, "the background command to finish", func() bool {
		out := procs.Execute(toolstest.Context(), json.RawMessage(`{"action":"output","id":"`+id[1]+`"}`)).ForLLM
		return strings.Contains(out, "refused")
	})
	if _, err := os.Stat(filepath.Join(outside, "bg")); err == nil {
		t.Fatal("a sandboxed background process wrote outside its workspace")
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
