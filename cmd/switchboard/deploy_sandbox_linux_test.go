//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	toolexec "github.com/switchboard-chat/switchboard/tools/exec"
)

// Running the sandbox under the systemd unit's restrictions, emulated on
// one thread of the test: systemd is not PID 1 where the tests run.

// cloneFlags are the namespaces' clone(2) flags by RestrictNamespaces= name.
var cloneFlags = map[string]uint32{
	"cgroup": unix.CLONE_NEWCGROUP, "ipc": unix.CLONE_NEWIPC, "mnt": unix.CLONE_NEWNS, "net": unix.CLONE_NEWNET,
	"pid": unix.CLONE_NEWPID, "user": unix.CLONE_NEWUSER, "uts": unix.CLONE_NEWUTS,
}

// seccompRestrictNamespaces is the filter systemd installs for
// RestrictNamespaces=: clone, unshare and setns fail with EPERM for a
// namespace outside allowed, and clone3 (whose flags a filter cannot read)
// with ENOSYS, so that libc falls back to clone.
func seccompRestrictNamespaces(allowed map[string]bool) *unix.SockFprog {
	var deny uint32
	for n, f := range cloneFlags {
		if !allowed[n] {
			deny |= f
		}
	}
	const ld, jeq, jset, ja, ret = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K,
		unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K, unix.BPF_JMP | unix.BPF_JA, unix.BPF_RET | unix.BPF_K
	// struct seccomp_data: nr at 0, args[i] at 16+8i (low half first on
	// little-endian machines).
	prog := []unix.SockFilter{
		{Code: ld, K: 0},
		{Code: jeq, Jt: 10, K: unix.SYS_CLONE3},
		{Code: jeq, Jt: 3, K: unix.SYS_CLONE},
		{Code: jeq, Jt: 2, K: unix.SYS_UNSHARE},
		{Code: jeq, Jt: 3, K: unix.SYS_SETNS},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
		{Code: ld, K: 16},
		{Code: ja, K: 1},
		{Code: ld, K: 24},
		{Code: jset, Jt: 1, K: deny},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
		{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
		{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
	}
	return &unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
}

// unitNobody is the uid and gid the emulated unit's daemon runs as, like
// DynamicUser's: not root, no capabilities.
const unitNobody = 65534

// underUnit runs fn on an OS thread confined as the unit confines the
// daemon: the /proc covers of its Protect* directives in a mount namespace
// of its own, an empty capability bounding set, an unprivileged user,
// NoNewPrivileges, and RestrictNamespaces= as the seccomp filter systemd
// installs for it. The processes fn starts inherit all of it. The thread
// is never given back: it ends with fn.
func underUnit(svc map[string][]string, allowed map[string]bool, fn func()) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the confined thread exits with the goroutine
		if err := confineThread(svc, allowed); err != nil {
			done <- err
			return
		}
		fn()
		done <- nil
	}()
	return <-done
}

// confineThread applies underUnit's confinement to the calling thread
// only, with raw system calls: the syscall package's setresuid changes
// every thread of the test binary.
func confineThread(svc map[string][]string, allowed map[string]bool) error {
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("unshare the mount namespace: %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	// What systemd mounts for these directives, as far as the sandbox's
	// /proc is concerned: read-only binds on directories, a cover on a file.
	if unitBool(svc, "ProtectKernelTunables") {
		for _, p := range []string{"/proc/sys", "/proc/bus", "/proc/fs", "/proc/irq"} {
			if err := unix.Mount(p, p, "", unix.MS_BIND, ""); err == nil {
				_ = unix.Mount("", p, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, "")
			}
		}
	}
	if unitBool(svc, "ProtectKernelLogs") {
		if err := unix.Mount("/dev/null", "/proc/kmsg", "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("cover /proc/kmsg: %w", err)
		}
	}
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		_ = unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
	}
	// The filter goes on while the thread may still install one without
	// no_new_privs, so a unit without NoNewPrivileges= is emulated too.
	prog := seccompRestrictNamespaces(allowed)
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(prog)), 0, 0); err != nil {
		return fmt.Errorf("seccomp filter: %w", err)
	}
	runtime.KeepAlive(prog)
	if _, _, e := unix.RawSyscall(unix.SYS_SETGROUPS, 0, 0, 0); e != 0 {
		return fmt.Errorf("setgroups: %w", e)
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESGID, unitNobody, unitNobody, unitNobody); e != 0 {
		return fmt.Errorf("setresgid: %w", e)
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, unitNobody, unitNobody, unitNobody); e != 0 {
		return fmt.Errorf("setresuid: %w", e)
	}
	if unitBool(svc, "NoNewPrivileges") {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("no_new_privs: %w", err)
		}
	}
	return nil
}

// sandboxUnderUnit builds the sandbox as the daemon does at start, under
// the unit's confinement, and runs a command in it: the command's output,
// or FindSandbox's error.
func sandboxUnderUnit(t *testing.T, svc map[string][]string) (string, error) {
	t.Helper()
	allowed, err := allowedNamespaces(svc["RestrictNamespaces"])
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	var ws string
	confineErr := underUnit(svc, allowed, func() {
		var sb *toolexec.Sandbox
		if sb, _, err = toolexec.FindSandbox(toolexec.SandboxBwrap, false, nil); err != nil {
			return
		}
		if ws, err = os.MkdirTemp("", "switchboard-unit-sandbox-"); err != nil {
			return
		}
		argv := sb.Wrap([]string{"/bin/sh", "-c", "echo pid $$; touch /etc/planted 2>/dev/null || echo read-only"}, ws)
		out, err = exec.Command(argv[0], argv[1:]...).CombinedOutput()
	})
	if ws != "" {
		t.Cleanup(func() { os.RemoveAll(ws) })
	}
	if confineErr != nil {
		t.Fatalf("emulating the unit: %v", confineErr)
	}
	return string(out), err
}

// needUnitEmulation skips (in CI: fails) where the unit cannot be
// emulated: it needs root, bubblewrap and a little-endian machine whose
// seccomp data this filter reads.
func needUnitEmulation(t *testing.T) {
	t.Helper()
	why := ""
	if _, err := exec.LookPath("bwrap"); err != nil {
		why = "no bwrap; install the bubblewrap package"
	} else if os.Geteuid() != 0 {
		why = "emulating the unit's mounts and user needs root"
	} else if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		why = "the seccomp filter is written for amd64 and arm64"
	}
	if why == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI must run this test: %s", why)
	}
	t.Skipf("SKIPPED LOUDLY: %s", why)
}

// TestSandboxRunsUnderUnit: the sandbox that the daemon builds at start
// works under the shipped unit's restrictions (emulated: systemd is not
// PID 1 here), and where a unit breaks it the probe says which directive
// to change.
func TestSandboxRunsUnderUnit(t *testing.T) {
	needUnitEmulation(t)
	// Control: unconfined but for the user, the sandbox works here, so a
	// failure below is the unit's.
	if out, err := sandboxUnderUnit(t, map[string][]string{}); err != nil || !strings.Contains(out, "read-only") {
		t.Skipf("SKIPPED LOUDLY: bubblewrap does not work for an unprivileged user on this machine at all: %v %s", err, out)
	}
	unit := readDeploy(t, "deploy/switchboard.service")
	out, err := sandboxUnderUnit(t, unitService(unit))
	if err != nil {
		t.Fatalf("under deploy/switchboard.service the sandbox fails: %v", err)
	}
	// Its own PIDs (bwrap's init is 1) and read-only system dirs.
	if !regexp.MustCompile(`(?m)^pid [12]$`).MatchString(out) || !strings.Contains(out, "read-only") {
		t.Fatalf("the command in the sandbox printed %q, want its own PIDs and a read-only /etc", out)
	}

	// The probe names the fix for each way a unit breaks it.
	for add, want := range map[string]string{
		"RestrictNamespaces=yes":    "set RestrictNamespaces=" + strings.Join((&toolexec.Sandbox{}).Namespaces(), " "),
		"ProtectKernelTunables=yes": "remove ProtectKernelTunables=",
		"ProtectKernelLogs=yes":     "remove ProtectKernelTunables=, ProtectKernelLogs=",
	} {
		svc := unitService(unit)
		k, v, _ := strings.Cut(add, "=")
		svc[k] = []string{v}
		_, err := sandboxUnderUnit(t, svc)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("with %s: FindSandbox says %v, want the advice %q", add, err, want)
		}
	}
}
