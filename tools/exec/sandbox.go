package exec

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// The exec sandbox modes (config exec.sandbox).
const (
	SandboxAuto  = "auto"  // bubblewrap when it works here, else none, with a warning
	SandboxBwrap = "bwrap" // bubblewrap or refuse to start
	SandboxNone  = "none"
)

// Sandbox runs commands inside bubblewrap: a new PID, IPC and UTS
// namespace (and network namespace, so no network, unless Network), the
// system directories read-only, a fresh /tmp, /proc and /dev, and the
// session's workspace the only place it can write. Everything else of the
// machine — the daemon's data_dir, config and home — is absent.
type Sandbox struct {
	Bwrap   string // path of the bwrap binary
	Network bool
}

// sandboxReadOnly are bound read-only when they exist.
var sandboxReadOnly = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc"}

// Wrap returns argv run inside the sandbox with workspace writable.
func (s *Sandbox) Wrap(argv []string, workspace string) []string {
	out := []string{s.Bwrap, "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"}
	if !s.Network {
		out = append(out, "--unshare-net")
	}
	for _, d := range sandboxReadOnly {
		out = append(out, "--ro-bind-try", d, d)
	}
	out = append(out, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
		"--bind", workspace, workspace, "--chdir", workspace, "--")
	return append(out, argv...)
}

// Namespaces lists the kernel namespaces bwrap creates for Wrap's
// commands, by the names systemd's RestrictNamespaces= takes: a mount
// namespace always, a user namespace because bwrap runs unprivileged (the
// only way it may mount), and one for each --unshare-* flag Wrap passes.
// A service manager or container runtime that forbids any of them makes
// the sandbox fail, so deployment files are checked against this list.
func (s *Sandbox) Namespaces() []string {
	ns := []string{"user", "mnt"}
	for _, a := range s.Wrap(nil, "/") {
		if rest, ok := strings.CutPrefix(a, "--unshare-"); ok {
			if n := strings.TrimSuffix(rest, "-try"); !slices.Contains(ns, n) {
				ns = append(ns, n)
			}
		}
	}
	return ns
}

// Describe says what the sandbox allows, for /status and doctor.
func (s *Sandbox) Describe() string {
	if s == nil {
		return "none — commands can read and write whatever their user can"
	}
	net := "no network"
	if s.Network {
		net = "network allowed"
	}
	return "bubblewrap (" + net + "; writes only in the workspace; system dirs read-only; own PIDs)"
}

// FindSandbox picks the sandbox for mode: it looks for bwrap on PATH and
// checks that it can build a sandbox here as runAs (nil: this process's
// user). With SandboxAuto a missing or broken bwrap gives no sandbox and
// the reason, to be logged loudly; with SandboxBwrap it is an error.
func FindSandbox(mode string, network bool, runAs *ExecUser) (*Sandbox, string, error) {
	switch mode {
	case SandboxNone:
		return nil, "exec.sandbox is none", nil
	case "", SandboxAuto, SandboxBwrap:
	default:
		return nil, "", fmt.Errorf("exec.sandbox must be auto, bwrap or none (got %q)", mode)
	}
	path, err := exec.LookPath("bwrap")
	if err != nil {
		return noSandbox(mode, fmt.Sprintf("bubblewrap is not installed (%v); install the bubblewrap package", err))
	}
	sb := &Sandbox{Bwrap: path, Network: network}
	if err = sb.probe(runAs); err != nil {
		return noSandbox(mode, fmt.Sprintf("bubblewrap cannot build a sandbox here (%v); %s", err, sandboxAdvice(err, sb.Namespaces())))
	}
	return sb, "", nil
}

// noSandbox is FindSandbox's answer when bubblewrap does not work: the
// reason with SandboxAuto, an error with SandboxBwrap.
func noSandbox(mode, why string) (*Sandbox, string, error) {
	if mode == SandboxBwrap {
		return nil, "", fmt.Errorf("exec.sandbox is bwrap but %s, or set exec.sandbox: auto", why)
	}
	return nil, why, nil
}

// probe runs `true` in the sandbox.
func (s *Sandbox) probe(runAs *ExecUser) error {
	dir, err := os.MkdirTemp("", "switchboard-sandbox-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	_ = os.Chmod(dir, 0o777)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	argv := s.Wrap([]string{"/bin/sh", "-c", "true"}, dir)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = []string{"PATH=" + defaultExecPath}
	if runAs != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: runAs.credential()}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// sandboxAdvice says what to change when the probe failed with err. The
// kernel mounts a fresh /proc in a user namespace only when the /proc it
// inherits is fully visible, which systemd's /proc protections and a
// container's masked paths prevent; everything else bwrap needs is the
// namespaces themselves, which service managers, container seccomp and
// AppArmor profiles, and host sysctls may refuse.
func sandboxAdvice(err error, namespaces []string) string {
	if strings.Contains(err.Error(), "mount proc") {
		return "parts of /proc are covered, so the kernel refuses the sandbox a /proc of its own: " +
			"under systemd remove ProtectKernelTunables=, ProtectKernelLogs=, ProtectProc= and ProcSubset= from the unit; " +
			"in Docker add security_opt systempaths=unconfined; in Kubernetes set procMount: Unmasked with hostUsers: false (the chart's execSandbox.enabled)"
	}
	ns := strings.Join(namespaces, " ")
	return "it may not create the namespaces it needs (" + ns + "): " +
		"under systemd set RestrictNamespaces=" + ns + "; " +
		"in Docker add security_opt seccomp=unconfined and apparmor=unconfined (the default profiles refuse unshare and mount without CAP_SYS_ADMIN); " +
		"in Kubernetes set the seccomp and AppArmor profiles to Unconfined (the chart's execSandbox.enabled); " +
		"on the host user namespaces must be allowed (sysctl user.max_user_namespaces above 0; " +
		"on Ubuntu 24.04 and later kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap)"
}
