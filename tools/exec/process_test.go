package exec_test

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/tools"
	"github.com/switchboard-chat/switchboard/tools/exec"
	"github.com/switchboard-chat/switchboard/tools/toolstest"
)

var procID = regexp.MustCompile(`started (p[0-9a-f]+)`)

func waitUntilTrue(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestProcesses: a background command runs between calls, its output is
// read back (the newest 64 KiB), stop kills it and its children, a session
// runs at most four, and Close kills what is left.
func TestProcesses(t *testing.T) {
	run := exec.New(exec.Options{Logger: discard, WorkspaceRoot: t.TempDir(), Mode: exec.ExecModeAllow})
	p := exec.NewProcesses(run)
	defer p.Close()
	do := func(args string) tools.Result { return p.Execute(toolstest.Context(), json.RawMessage(args)) }
	start := func(command string) string {
		t.Helper()
		args, _ := json.Marshal(map[string]string{"action": "start", "command": command})
		r := do(string(args))
		m := procID.FindStringSubmatch(r.ForLLM)
		if r.IsError || m == nil {
			t.Fatalf("start %q = %+v", command, r)
		}
		return m[1]
	}
	server := start(`sleep 300 & echo "child $!"; echo ready; wait`)
	var child int
	waitUntilTrue(t, "the output", func() bool {
		out := do(`{"action":"output","id":"` + server + `"}`).ForLLM
		if m := regexp.MustCompile(`child (\d+)`).FindStringSubmatch(out); m != nil && strings.Contains(out, "ready") {
			child, _ = strconv.Atoi(m[1])
			return true
		}
		return false
	})
	if l := do(`{"action":"list"}`).ForLLM; !strings.Contains(l, server+" [running]") {
		t.Fatalf("list = %q", l)
	}
	big := start(`head -c 200000 /dev/zero | tr '\0' x; echo; echo tail-$((40+2))`)
	// Its last line can be read before it has exited; it counts against the
	// limit of four until it has.
	waitUntilTrue(t, "the big process to end", func() bool {
		out := do(`{"action":"output","id":"` + big + `"}`).ForLLM
		return strings.Contains(out, "tail-42") && !strings.Contains(out, big+" [running]")
	})
	if out := do(`{"action":"output","id":"` + big + `"}`).ForLLM; !strings.Contains(out, "bytes of output were dropped") || len(out) > 70<<10 {
		t.Fatalf("output of a big process is %d bytes (%.200q); want the newest 64 KiB and a note", len(out), out)
	}
	for range 3 {
		start("sleep 300")
	}
	if r := do(`{"action":"start","command":"sleep 1"}`); !r.IsError || !strings.Contains(r.ForLLM, "already runs 4") {
		t.Fatalf("fifth start = %+v", r)
	}
	if r := do(`{"action":"stop","id":"` + server + `"}`); !strings.Contains(r.ForLLM, server+" [") || strings.Contains(r.ForLLM, "[running]") {
		t.Fatalf("stop = %+v", r)
	}
	waitUntilTrue(t, "the child to be gone", func() bool { return syscall.Kill(child, 0) == syscall.ESRCH })
	if r := do(`{"action":"start","command":"rm -rf /"}`); !r.IsError || !strings.Contains(r.ForLLM, "blocked") {
		t.Fatalf("a blocked command started: %+v", r)
	}
	other := tools.WithCall(toolstest.Context(), tools.Call{Session: "telegram:99", Agent: "main"})
	if r := p.Execute(other, json.RawMessage(`{"action":"output","id":"`+server+`"}`)); !r.IsError {
		t.Fatalf("another conversation read the process: %+v", r)
	}
}
