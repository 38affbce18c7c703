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
		"unknown Telegram fake":    {n: 1, inflight: 1, telegram: "real", command: []string{"x"}},
		"unknown model fake":       {n: 1, inflight: 1, model: "gpt", command: []string{"x"}},
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
	if r, w := procSyscalls("/proc/self/io"); r <= 0 || w < 0 {
		t.Errorf("procSyscalls(/proc/self/io) = %d, %d; want this process's counts (it has read files)", r, w)
	}
	if r, w := procSyscalls("/proc/0/io"); r != -1 || w != -1 {
		t.Errorf("a missing process: %d, %d, want -1, -1", r, w)
	}
	if p := percentile([]time.Duration{5, 1, 4, 2, 3}, 0.5); p != 3 {
		t.Errorf("median of 1…5 = %d, want 3", p)
	}
}

func TestHeapCountsReadTheRuntimesCounters(t *testing.T) {
	var h heapCounts
	h = heapCounts{bytes: -1, objects: -1}
	for _, line := range []string{
		"# HELP go_memstats_alloc_bytes_total x",
		`go_memstats_alloc_bytes_total{replica="vm"} 228315064`,
		"go_memstats_mallocs_total 1.980326e+06",
		`go_memstats_alloc_bytes{replica="vm"} 11313592`,
		`switchboard_messages_in_total{replica="vm",platform="telegram",kind="message"} 2150`,
	} {
		h.read(line)
	}
	if h.bytes != 228315064 || h.objects != 1980326 {
		t.Errorf("read %+v, want bytes 228315064 and objects 1980326", h)
	}
	if d := h.since(heapCounts{bytes: 100, objects: -1}); d.bytes != 228314964 || d.objects != -1 {
		t.Errorf("since = %+v, want the byte difference and no object count", d)
	}
	if got := metricsURL("http://127.0.0.1:18089/readyz"); got != "http://127.0.0.1:18089/metrics" {
		t.Errorf("metricsURL = %q", got)
	}
}
