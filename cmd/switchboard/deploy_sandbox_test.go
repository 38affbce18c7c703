package main

import (
	"bufio"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	toolexec "github.com/switchboard-chat/switchboard/tools/exec"
)

// The shipped deployments must let bubblewrap build the exec sandbox. The
// namespaces it needs come from tools.Sandbox itself, so the deploy files
// and the sandbox's flags cannot drift apart.

// systemdNamespaces are the namespace types RestrictNamespaces= knows.
var systemdNamespaces = []string{"cgroup", "ipc", "mnt", "net", "pid", "user", "uts"}

// sandboxNamespaces is every namespace the sandbox creates, with and
// without exec.network.
func sandboxNamespaces() []string {
	var all []string
	for _, network := range []bool{false, true} {
		for _, n := range (&toolexec.Sandbox{Bwrap: "bwrap", Network: network}).Namespaces() {
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
	return len(v) > 0 && systemdBool(v[len(v)-1])
}

// systemdBool reads a boolean as systemd does.
func systemdBool(v string) bool {
	switch strings.ToLower(v) {
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
		for _, n := range systemdNamespaces {
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
			if !slices.Contains(systemdNamespaces, n) {
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
	"ProtectKernelTunables": systemdBool,
	"ProtectKernelLogs":     systemdBool,
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
