package bot_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of /proc/<pid>/stat's CPU times (USER_HZ: 100 on
// Linux, whatever the kernel's own tick).
const clockTick = 10 * time.Millisecond

// serverCPU is the CPU time used so far by every process named comm on
// this machine (PostgreSQL's backends and helpers, say), including
// children they reaped (backends that exited). ok is false when /proc
// shows no such process: the server runs elsewhere, and its CPU cannot be
// reported.
func serverCPU(comm string) (cpu time.Duration, ok bool) {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // exited meanwhile
		}
		s := string(b)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open || s[open+1:end] != comm {
			continue
		}
		// After "(comm) ": state, ppid, …; utime, stime, cutime and cstime
		// are fields 14 to 17 of the whole line, 12 to 15 here.
		f := strings.Fields(s[end+1:])
		if len(f) < 15 {
			continue
		}
		for _, v := range f[11:15] {
			n, err := strconv.ParseInt(v, 10, 64)
			if err == nil {
				cpu += time.Duration(n) * clockTick
			}
		}
		ok = true
	}
	return cpu, ok
}
