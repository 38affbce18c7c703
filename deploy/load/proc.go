package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of /proc/<pid>/stat's CPU times (USER_HZ: 100 on
// Linux, whatever the kernel's own tick).
const clockTick = 10 * time.Millisecond

// usage is the CPU time used so far by the daemon, by PostgreSQL and Redis
// (every process of theirs on this machine, reaped children included; -1
// when none runs here) and by this process, and the daemon's memory.
type usage struct {
	daemon, postgres, redis, self time.Duration
	rss, rssAnon                  int64 // KiB
	// syscr and syscw count the daemon's read and write system calls
	// (/proc/<pid>/io; -1 when it cannot be read).
	syscr, syscw int64
}

// sample reads usage from /proc.
func sample(pid int) usage {
	u := usage{postgres: -1, redis: -1}
	u.daemon, _ = procCPU(fmt.Sprintf("/proc/%d/stat", pid), false)
	u.self, _ = procCPU("/proc/self/stat", false)
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		cpu, comm := procCPU(p, true)
		switch comm {
		case "postgres":
			u.postgres = max(u.postgres, 0) + cpu
		case "redis-server":
			u.redis = max(u.redis, 0) + cpu
		}
	}
	u.syscr, u.syscw = procSyscalls(fmt.Sprintf("/proc/%d/io", pid))
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for line := range strings.Lines(string(status)) {
		name, val, _ := strings.Cut(line, ":")
		kib, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(val), " kB"), 10, 64)
		switch name {
		case "VmRSS":
			u.rss = kib
		case "RssAnon":
			u.rssAnon = kib
		}
	}
	return u
}

// procCPU returns the user and system CPU time in the stat file at path
// (plus that of reaped children when children is set) and the process's
// name; zero and "" when the file cannot be read (the process exited).
func procCPU(path string, children bool) (time.Duration, string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, ""
	}
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return 0, ""
	}
	// After "(comm) ": state, ppid, …; utime, stime, cutime and cstime are
	// fields 14 to 17 of the whole line, 12 to 15 here.
	f := strings.Fields(s[end+1:])
	if len(f) < 15 {
		return 0, ""
	}
	fields := f[11:13]
	if children {
		fields = f[11:15]
	}
	var cpu time.Duration
	for _, v := range fields {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			cpu += time.Duration(n) * clockTick
		}
	}
	return cpu, s[open+1 : end]
}

// procSyscalls returns the syscr and syscw counts of the io file at path;
// -1, -1 when it cannot be read.
func procSyscalls(path string) (reads, writes int64) {
	reads, writes = -1, -1
	b, err := os.ReadFile(path)
	if err != nil {
		return reads, writes
	}
	for line := range strings.Lines(string(b)) {
		name, val, _ := strings.Cut(line, ":")
		n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
		switch {
		case err != nil:
		case name == "syscr":
			reads = n
		case name == "syscw":
			writes = n
		}
	}
	return reads, writes
}

// since returns the CPU and system calls used between before and u, and
// u's memory.
func (u usage) since(before usage) usage {
	d := usage{daemon: u.daemon - before.daemon, self: u.self - before.self, postgres: -1, redis: -1, rss: u.rss, rssAnon: u.rssAnon, syscr: -1, syscw: -1}
	if u.syscr >= 0 && before.syscr >= 0 {
		d.syscr, d.syscw = u.syscr-before.syscr, u.syscw-before.syscw
	}
	if u.postgres >= 0 && before.postgres >= 0 {
		d.postgres = u.postgres - before.postgres
	}
	if u.redis >= 0 && before.redis >= 0 {
		d.redis = u.redis - before.redis
	}
	return d
}

// result is what one run measured.
type result struct {
	elapsed time.Duration
	latency []time.Duration
	cpu     usage           // used while measuring; the daemon's memory at the end
	heap    heapCounts      // the daemon's allocations while measuring
	long    []time.Duration // with -history: the latencies in the long chat
	longCPU usage           // and the CPU used meanwhile
}

// print writes the figures, one per line, as "name value unit".
func (r result) print(w io.Writer, o options) {
	n := float64(len(r.latency))
	perMsg := func(d time.Duration) string {
		if d < 0 {
			return "-"
		}
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond)/n, 'f', 3, 64)
	}
	fmt.Fprintf(w, "# %d messages from %d chats, %d unanswered at a time, after %d warm-up messages; CPU in %s ticks\n",
		len(r.latency), o.chats, o.inflight, o.warmup, clockTick)
	fmt.Fprintf(w, "msgs/s %.1f\n", n/r.elapsed.Seconds())
	fmt.Fprintf(w, "p50-ms %.2f\n", ms(percentile(r.latency, 0.50)))
	fmt.Fprintf(w, "p90-ms %.2f\n", ms(percentile(r.latency, 0.90)))
	fmt.Fprintf(w, "p99-ms %.2f\n", ms(percentile(r.latency, 0.99)))
	fmt.Fprintf(w, "max-ms %.2f\n", ms(percentile(r.latency, 1)))
	if len(r.long) > 0 {
		fmt.Fprintf(w, "# then %d messages one at a time in a chat of %d earlier messages\n", len(r.long), o.history)
		fmt.Fprintf(w, "long-chat-p50-ms %.2f\n", ms(percentile(r.long, 0.50)))
		fmt.Fprintf(w, "long-chat-p99-ms %.2f\n", ms(percentile(r.long, 0.99)))
		fmt.Fprintf(w, "long-chat-max-ms %.2f\n", ms(percentile(r.long, 1)))
		fmt.Fprintf(w, "long-chat-daemon-cpu-ms/msg %s\n", perMsg(r.longCPU.daemon))
		fmt.Fprintf(w, "long-chat-pg-cpu-ms/msg %s\n", perMsg(r.longCPU.postgres))
	}
	fmt.Fprintf(w, "daemon-cpu-ms/msg %s\n", perMsg(r.cpu.daemon))
	fmt.Fprintf(w, "pg-cpu-ms/msg %s\n", perMsg(r.cpu.postgres))
	fmt.Fprintf(w, "redis-cpu-ms/msg %s\n", perMsg(r.cpu.redis))
	fmt.Fprintf(w, "load-cpu-ms/msg %s\n", perMsg(r.cpu.self))
	perMsgCount := func(c int64) string {
		if c < 0 {
			return "-"
		}
		return strconv.FormatFloat(float64(c)/n, 'f', 1, 64)
	}
	fmt.Fprintf(w, "daemon-reads/msg %s\n", perMsgCount(r.cpu.syscr))
	fmt.Fprintf(w, "daemon-writes/msg %s\n", perMsgCount(r.cpu.syscw))
	fmt.Fprintf(w, "daemon-alloc-KiB/msg %s\n", perMsgCount(r.heap.bytes/1024))
	fmt.Fprintf(w, "daemon-allocs/msg %s\n", perMsgCount(r.heap.objects))
	fmt.Fprintf(w, "daemon-VmRSS-KiB %d\n", r.cpu.rss)
	fmt.Fprintf(w, "daemon-RssAnon-KiB %d\n", r.cpu.rssAnon)
}

// percentile returns the q-quantile (0 < q ≤ 1) of d, nearest rank.
func percentile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(q*float64(len(s)) + 0.5)
	return s[min(max(i-1, 0), len(s)-1)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
