package main

import (
	"strings"
	"testing"
	"time"
)

func TestReplyIndexReadsOnlyTheModelsEcho(t *testing.T) {
	for text, want := range map[string]int{
		"echo: m0 (history: 1 user messages)":   0,
		"echo: m417 (history: 3 user messages)": 417,
		"echo: m12":                             12,
	} {
		if got, ok := replyIndex(text); !ok || got != want {
			t.Errorf("replyIndex(%q) = %d, %v; want %d", text, got, ok, want)
		}
	}
	for _, text := range []string{"⏳ working…", "echo: hello", "echo: m-3 (x)", "m5", "echo: mx"} {
		if n, ok := replyIndex(text); ok {
			t.Errorf("replyIndex(%q) = %d, want no index", text, n)
		}
	}
}

func TestOptionsCheck(t *testing.T) {
	t.Setenv("SWITCHBOARD_HTTP_LISTEN", ":18089")
	o := options{n: 10, inflight: 4, command: []string{"/bin/true"}}
	if err := o.check(); err != nil || o.chats != 4 || o.ready != "http://127.0.0.1:18089/readyz" {
		t.Fatalf("check: %v, chats %d, ready %q", err, o.chats, o.ready)
	}
	for name, bad := range map[string]options{
		"no command":               {n: 10, inflight: 4},
		"fewer chats":              {n: 10, inflight: 4, chats: 2, command: []string{"x"}},
		"no messages":              {n: 0, inflight: 4, command: []string{"x"}},
		"negative warm-up":         {n: 1, warmup: -1, inflight: 1, command: []string{"x"}},
		"nothing in flight":        {n: 1, inflight: 0, command: []string{"x"}},
		"more than the fakes hold": {n: maxMessages, warmup: 1, inflight: 1, command: []string{"x"}},
	} {
		if err := bad.check(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	t.Setenv("SWITCHBOARD_HTTP_LISTEN", "")
	o = options{n: 1, inflight: 1, command: []string{"x"}}
	if err := o.check(); err == nil || !strings.Contains(err.Error(), "SWITCHBOARD_HTTP_LISTEN") {
		t.Errorf("no listen address and no -ready: err = %v, want it to say what to set", err)
	}
}

func TestProcCPUReadsThisProcess(t *testing.T) {
	// Use CPU until the kernel has counted a tick of it.
	cpu, comm := procCPU("/proc/self/stat", false)
	for deadline := time.Now().Add(10 * time.Second); cpu <= 0 && time.Now().Before(deadline); {
		cpu, comm = procCPU("/proc/self/stat", false)
	}
	if comm == "" || cpu <= 0 {
		t.Fatalf("procCPU(/proc/self/stat) = %v, %q; want this process's CPU and name", cpu, comm)
	}
	if cpu, comm := procCPU("/proc/0/stat", false); cpu != 0 || comm != "" {
		t.Errorf("a missing process: %v, %q, want nothing", cpu, comm)
	}
	if p := percentile([]time.Duration{5, 1, 4, 2, 3}, 0.5); p != 3 {
		t.Errorf("median of 1…5 = %d, want 3", p)
	}
}
