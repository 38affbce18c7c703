package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/switchboard-chat/switchboard/tools"
)

// The shipped deployments must let bubblewrap build the exec sandbox. The
// namespaces it needs come from tools.Sandbox itself, so the deploy files
// and the sandbox's flags cannot drift apart.

// cloneFlags are the namespaces by RestrictNamespaces= name.
var cloneFlags = map[string]uint32{
	"cgroup": unix.CLONE_NEWCGROUP, "ipc": unix.CLONE_NEWIPC, "mnt": unix.CLONE_NEWNS, "net": unix.CLONE_NEWNET,
	"pid": unix.CLONE_NEWPID, "user": unix.CLONE_NEWUSER, "uts": unix.CLONE_NEWUTS,
}

// sandboxNamespaces is every namespace the sandbox creates, with and
// without exec.network.
func sandboxNamespaces() []string {
	var all []string
	for _, network := range []bool{false, true} {
		for _, n := range (&tools.Sandbox{Bwrap: "bwrap", Network: network}).Namespaces() {
			if !slices.Contains(all, n) {
				all = append(all, n)
			}
		}
	}
	return all
}

// unitService returns the [Service] section's directives, each with its
// assignments in order.
func unitService(src string) map[string][]string {
	out := map[string][]string{}
	section := ""
	sc := bufio.NewScanner(strings.NewReader(src))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "["):
			section = line
		case section == "[Service]":
			if k, v, ok := strings.Cut(line, "="); ok {
				out[k] = append(out[k], v)
			}
		}
	}
	return out
}

// unitBool is systemd's boolean for directive's last assignment (false
// when unset).
func unitBool(svc map[string][]string, directive string) bool {
	v := svc[directive]
	if len(v) == 0 {
		return false
	}
	switch strings.ToLower(v[len(v)-1]) {
	case "1", "yes", "y", "true", "t", "on":
		return true
	}
	return false
}

// allowedNamespaces reads RestrictNamespaces= as systemd does: unset or
// "no" allows all, "yes" none, and a list allows those ("~list": all but
// those); a later list adds to what came before ("~": takes away), and an
// empty assignment starts over.
func allowedNamespaces(values []string) (map[string]bool, error) {
	allowed := map[string]bool{}
	set := func(on bool) {
		for n := range cloneFlags {
			allowed[n] = on
		}
	}
	set(true)
	initial := true
	for _, v := range values {
		v = strings.TrimSpace(v)
		switch strings.ToLower(v) {
		case "":
			set(true)
			initial = true
			continue
		case "no", "false", "0", "off":
			set(true)
			initial = false
			continue
		case "yes", "true", "1", "on":
			set(false)
			initial = false
			continue
		}
		inverted := strings.HasPrefix(v, "~")
		if initial {
			set(inverted)
		}
		initial = false
		for _, n := range strings.Fields(strings.TrimPrefix(v, "~")) {
			if _, ok := cloneFlags[n]; !ok {
				return nil, fmt.Errorf("RestrictNamespaces=%s: unknown namespace %q", v, n)
			}
			allowed[n] = !inverted
		}
	}
	return allowed, nil
}

// bwrapSyscalls are the system calls bubblewrap makes to build the sandbox.
var bwrapSyscalls = []string{"clone", "unshare", "mount", "umount2", "pivot_root", "capset", "prctl", "setresuid", "execve"}

// procCovers are the directives that cover parts of /proc: the kernel then
// refuses the sandbox's own /proc mount (mount_too_revealing: a user
// namespace may mount procfs only while an inherited one is fully visible).
var procCovers = map[string]func(string) bool{
	"ProtectKernelTunables": func(v string) bool { return unitBool(map[string][]string{"x": {v}}, "x") },
	"ProtectKernelLogs":     func(v string) bool { return unitBool(map[string][]string{"x": {v}}, "x") },
	"ProtectProc":           func(v string) bool { return v != "" && v != "default" },
	"ProcSubset":            func(v string) bool { return v != "" && v != "all" },
}

// checkUnitSandbox lists what in the unit's [Service] keeps bubblewrap
// from building the exec sandbox; expand resolves a @group of
// SystemCallFilter= to its system calls.
func checkUnitSandbox(svc map[string][]string, expand func(group string) ([]string, error)) []string {
	var problems []string
	allowed, err := allowedNamespaces(svc["RestrictNamespaces"])
	if err != nil {
		problems = append(problems, err.Error())
	}
	for _, n := range sandboxNamespaces() {
		if err == nil && !allowed[n] {
			problems = append(problems, fmt.Sprintf("RestrictNamespaces=%s forbids the %s namespace the sandbox creates", strings.Join(svc["RestrictNamespaces"], " "), n))
		}
	}
	for directive, covers := range procCovers {
		for _, v := range svc[directive] {
			if covers(v) {
				problems = append(problems, fmt.Sprintf("%s=%s covers parts of /proc: the sandbox's own /proc mount is refused", directive, v))
			}
		}
	}
	for _, directive := range []string{"InaccessiblePaths", "ReadOnlyPaths", "TemporaryFileSystem", "BindPaths", "BindReadOnlyPaths"} {
		for _, v := range svc[directive] {
			for _, p := range strings.Fields(v) {
				if p = strings.TrimLeft(p, "-+"); p == "/proc" || strings.HasPrefix(p, "/proc/") {
					problems = append(problems, fmt.Sprintf("%s=%s covers parts of /proc: the sandbox's own /proc mount is refused", directive, v))
				}
			}
		}
	}
	denied, err := deniedSyscalls(svc["SystemCallFilter"], expand)
	if err != nil {
		return append(problems, err.Error())
	}
	for _, s := range bwrapSyscalls {
		if denied(s) {
			problems = append(problems, fmt.Sprintf("SystemCallFilter= denies %s, which bubblewrap needs", s))
		}
	}
	return problems
}

// deniedSyscalls reads SystemCallFilter= as systemd does: plain lists are
// allowed (the first makes it an allow-list), "~" lists are denied.
func deniedSyscalls(values []string, expand func(string) ([]string, error)) (func(string) bool, error) {
	allowList := false
	allowed, denied := map[string]bool{}, map[string]bool{}
	for i, v := range values {
		inverted := strings.HasPrefix(v, "~")
		if i == 0 {
			allowList = !inverted
		}
		for _, name := range strings.Fields(strings.TrimPrefix(v, "~")) {
			names := []string{name}
			if strings.HasPrefix(name, "@") {
				var err error
				if names, err = expand(name); err != nil {
					return nil, fmt.Errorf("SystemCallFilter=%s: %w", v, err)
				}
			}
			for _, n := range names {
				if inverted {
					denied[n], allowed[n] = true, false
				} else {
					allowed[n], denied[n] = true, false
				}
			}
		}
	}
	return func(s string) bool { return denied[s] || (allowList && !allowed[s]) }, nil
}

// systemdSyscallGroup asks systemd-analyze for a @group's system calls.
func systemdSyscallGroup(group string) ([]string, error) {
	out, err := exec.Command("systemd-analyze", "syscall-filter", "--no-pager", group).Output()
	if err != nil {
		return nil, fmt.Errorf("systemd-analyze syscall-filter %s: %w (install systemd to check the unit's SystemCallFilter=)", group, err)
	}
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) == 1 && !strings.HasPrefix(f[0], "#") && !strings.HasSuffix(f[0], ":") {
			names = append(names, strings.TrimPrefix(f[0], "@"))
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("systemd-analyze knows no group %s", group)
	}
	return names, nil
}

// TestSystemdUnitAllowsSandbox: the unit lets bubblewrap create every
// namespace the sandbox uses, leaves /proc whole, and denies none of
// bubblewrap's system calls.
func TestSystemdUnitAllowsSandbox(t *testing.T) {
	svc := unitService(readDeploy(t, "deploy/switchboard.service"))
	for _, p := range checkUnitSandbox(svc, systemdSyscallGroup) {
		t.Error(p)
	}
	// The unit still confines the daemon: only the namespaces are opened.
	for _, d := range []string{"NoNewPrivileges", "ProtectSystem", "ProtectHome", "PrivateTmp", "PrivateDevices", "RestrictSUIDSGID", "LockPersonality"} {
		if len(svc[d]) == 0 {
			t.Errorf("the unit lost %s=", d)
		}
	}
	if v := svc["CapabilityBoundingSet"]; len(v) != 1 || v[0] != "" {
		t.Errorf("CapabilityBoundingSet=%v, want it empty: bubblewrap needs no capabilities", v)
	}
}

// TestUnitSandboxChecksCatchBrokenUnits: the check above fails for each
// way a unit can break the sandbox, today's RestrictNamespaces=yes first.
func TestUnitSandboxChecksCatchBrokenUnits(t *testing.T) {
	good := readDeploy(t, "deploy/switchboard.service")
	noGroups := func(g string) ([]string, error) {
		return map[string][]string{"@mount": {"mount", "umount2", "pivot_root"}}[g], nil
	}
	for name, c := range map[string]struct{ add, want string }{
		"namespaces forbidden":  {"RestrictNamespaces=yes", "forbids the user namespace"},
		"net left out":          {"RestrictNamespaces=user mnt pid ipc uts cgroup", "forbids the net namespace"},
		"user taken away":       {"RestrictNamespaces=~user", "forbids the user namespace"},
		"kernel tunables":       {"ProtectKernelTunables=yes", "ProtectKernelTunables=yes covers parts of /proc"},
		"kernel logs":           {"ProtectKernelLogs=true", "ProtectKernelLogs=true covers parts of /proc"},
		"hidden pids":           {"ProtectProc=invisible", "ProtectProc=invisible covers"},
		"a /proc path":          {"InaccessiblePaths=-/proc/kcore", "InaccessiblePaths=-/proc/kcore covers"},
		"mount denied":          {"SystemCallFilter=~@mount", "denies mount"},
		"allow-list too narrow": {"SystemCallFilter=read write", "denies clone"},
	} {
		t.Run(name, func(t *testing.T) {
			svc := unitService(good)
			k, v, _ := strings.Cut(c.add, "=")
			svc[k] = []string{v}
			problems := strings.Join(checkUnitSandbox(svc, noGroups), "\n")
			if !strings.Contains(problems, c.want) {
				t.Errorf("with %s the check says %q, want %q", c.add, problems, c.want)
			}
		})
	}
	for _, unit := range []string{
		"RestrictNamespaces=user mnt\nRestrictNamespaces=pid ipc uts cgroup net",
		"RestrictNamespaces=yes\nRestrictNamespaces=user mnt pid ipc uts cgroup net",
		"RestrictNamespaces=no\nRestrictNamespaces=user",
	} {
		if p := checkUnitSandbox(unitService("[Service]\n"+unit+"\n"), noGroups); len(p) != 0 {
			t.Errorf("%q, as systemd reads it, allows the sandbox; the check says %v", unit, p)
		}
	}
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
		var sb *tools.Sandbox
		if sb, _, err = tools.FindSandbox(tools.SandboxBwrap, false, nil); err != nil {
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
		"RestrictNamespaces=yes":    "set RestrictNamespaces=" + strings.Join((&tools.Sandbox{}).Namespaces(), " "),
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

// composeSandboxOpts are the security_opt entries a compose service needs
// for the exec sandbox under Docker: its default seccomp profile refuses
// unshare and clone with namespace flags, its AppArmor profile refuses
// mount, and its masked /proc paths make the kernel refuse bubblewrap a
// /proc of its own. "systempaths=unconfined" must be spelt so: compose
// matches it exactly.
var composeSandboxOpts = []string{"seccomp=unconfined", "apparmor=unconfined", "systempaths=unconfined"}

// composeSandboxProblems says what in a compose service's security_opt and
// cap_drop keeps the sandbox from working, or lets the daemon gain more
// than the sandbox needs.
func composeSandboxProblems(service string, securityOpt, capDrop []string) []string {
	var problems []string
	for _, want := range composeSandboxOpts {
		if !slices.Contains(securityOpt, want) {
			problems = append(problems, fmt.Sprintf("%s: security_opt %v lacks %s, so exec runs without the sandbox", service, securityOpt, want))
		}
	}
	if !slices.Contains(securityOpt, "no-new-privileges:true") && !slices.Contains(securityOpt, "no-new-privileges") {
		problems = append(problems, fmt.Sprintf("%s: security_opt %v lacks no-new-privileges:true", service, securityOpt))
	}
	if !slices.Contains(capDrop, "ALL") {
		problems = append(problems, fmt.Sprintf("%s: cap_drop %v is not [ALL]: bubblewrap needs no capabilities", service, capDrop))
	}
	return problems
}

// dockerfileSandboxProblems says what in the Dockerfile keeps the final
// stages' user from running bubblewrap.
func dockerfileSandboxProblems(src string) []string {
	src = strings.ReplaceAll(src, "\\\n", " ") // continued RUN lines as one
	stages := dockerStages(src)
	parent := map[string]string{}
	from := regexp.MustCompile(`(?im)^FROM\s+(\S+)\s+AS\s+(\S+)`)
	for _, m := range from.FindAllStringSubmatch(src, -1) {
		parent[m[2]] = m[1]
	}
	install := regexp.MustCompile(`(?m)^RUN .*apt-get install [^\n]*\bbubblewrap\b`)
	var problems []string
	for _, final := range []string{"runtime", "embedded"} {
		found := false
		for st := final; stages[st] != "" && !found; st = parent[st] {
			found = install.MatchString(stages[st])
		}
		if !found {
			problems = append(problems, fmt.Sprintf("stage %s does not install bubblewrap: exec runs without the sandbox", final))
		}
	}
	// Debian's bwrap is not setuid and builds the sandbox in a user
	// namespace; made setuid it would run privileged, removed or locked away
	// the daemon's user cannot run it.
	for _, line := range strings.Split(src, "\n") {
		if strings.Contains(line, "bwrap") && regexp.MustCompile(`\b(chmod|chown|rm|setcap|dpkg-statoverride)\b`).MatchString(line) {
			problems = append(problems, fmt.Sprintf("%q changes bwrap: the daemon's user must run the distribution's unprivileged bwrap", strings.TrimSpace(line)))
		}
	}
	return problems
}

// TestDeployImagesCarrySandbox: the image installs bubblewrap where the
// daemon runs, and the compose files start it with what Docker must allow.
func TestDeployImagesCarrySandbox(t *testing.T) {
	for _, p := range dockerfileSandboxProblems(readDeploy(t, "deploy/Dockerfile")) {
		t.Error(p)
	}
	broken := strings.Replace(readDeploy(t, "deploy/Dockerfile"), "ca-certificates bubblewrap", "ca-certificates", 1)
	if p := dockerfileSandboxProblems(broken); len(p) != 2 {
		t.Errorf("without bubblewrap the check says %v, want both final stages named", p)
	}
	if p := dockerfileSandboxProblems(readDeploy(t, "deploy/Dockerfile") + "RUN chmod u+s /usr/bin/bwrap\n"); !strings.Contains(strings.Join(p, "\n"), "changes bwrap") {
		t.Errorf("a setuid bwrap passes the check: %v", p)
	}
	if p := composeSandboxProblems("x", []string{"seccomp=unconfined", "systempaths:unconfined"}, nil); len(p) != 4 {
		t.Errorf("the compose check misses what is missing: %v", p)
	}
}
