package shellguard

import (
	"path"
	"regexp"
	"strings"
)

// cleanPath cleans p like path.Clean, keeping relative paths relative.
func cleanPath(p string) string {
	if p == "" {
		return ""
	}
	return path.Clean(p)
}

// netDevice reports whether p is bash's /dev/tcp or /dev/udp pseudo-device.
func netDevice(p string) bool {
	c := cleanPath(p)
	return strings.HasPrefix(c, "/dev/tcp/") || strings.HasPrefix(c, "/dev/udp/") ||
		c == "/dev/tcp" || c == "/dev/udp"
}

// safeDevices are /dev entries that are fine to write to.
var safeDevices = setOf("null", "zero", "full", "random", "urandom", "tty", "stdout", "stderr", "stdin", "ptmx", "console")

// blockDevice reports whether writing to p writes to a disk, memory or
// another raw device. Anything under /dev that is not known to be harmless
// counts, including paths with parts only known at run time.
func blockDevice(p string) bool {
	c := cleanPath(p)
	rest, ok := strings.CutPrefix(c, "/dev/")
	if !ok {
		return false
	}
	if strings.Contains(rest, unknownPart) {
		return true
	}
	if safeDevices[rest] || strings.HasPrefix(rest, "fd/") || strings.HasPrefix(rest, "pts/") ||
		strings.HasPrefix(rest, "shm/") || strings.HasPrefix(rest, "tty") {
		return false
	}
	return true
}

// protectedFiles are system files whose modification grants privileges.
var protectedFiles = []string{"/etc/passwd", "/etc/shadow", "/etc/group", "/etc/gshadow", "/etc/sudoers",
	"/etc/ld.so.preload", "/etc/crontab", "/etc/profile", "/etc/bash.bashrc", "/etc/environment",
	"/etc/sudoers.d/x", "/etc/cron.d/x", "/etc/pam.d/x", "/etc/profile.d/x", "/etc/systemd/system/x",
	"/var/spool/cron/crontabs/x", "/root/.bashrc", "/root/.ssh/authorized_keys"}

// protectedPath explains why writing to a is privilege escalation, or "".
func protectedPath(a arg) string {
	c := cleanPath(a.val)
	base := path.Base(c)
	if base == "authorized_keys" || base == "authorized_keys2" {
		return "an SSH authorized_keys file"
	}
	if strings.HasPrefix(c, "/root/") {
		return "a system account or privilege file"
	}
	for _, p := range protectedFiles {
		if c == p || (strings.HasSuffix(p, "/x") && strings.HasPrefix(c, strings.TrimSuffix(p, "x"))) || matchPattern(c, p) {
			return "a system account or privilege file"
		}
	}
	return ""
}

// matchPattern reports whether the pattern form of a path (with * for parts
// only known at run time) could name target.
func matchPattern(pattern, target string) bool {
	if !strings.ContainsAny(pattern, "*?[") {
		return false
	}
	ok, err := path.Match(pattern, target)
	return err == nil && ok
}

// sshKeyName matches private key file names.
var sshKeyName = regexp.MustCompile(`^id_(rsa|dsa|ecdsa|ed25519|xmss)(_sk)?$`)

// credentialSuffixes are per-user credential stores.
var credentialSuffixes = []string{".aws/credentials", ".netrc", ".pgpass", ".git-credentials",
	".docker/config.json", ".kube/config", ".config/gh/hosts.yml", ".gnupg/private-keys-v1.d", ".gnupg/secring.gpg"}

// credentialSamples are files a path pattern must not be able to match.
var credentialSamples = []string{"/etc/shadow", "/etc/gshadow", "/proc/1/environ", "/proc/self/environ"}

// credentialPath explains why a names a secret (private keys, password
// hashes, another process's environment — including the daemon's), or "".
func credentialPath(a arg) string {
	v := a.val
	if v == "" || (!strings.Contains(v, "/") && !strings.HasPrefix(v, "~") && v != "environ") {
		return ""
	}
	if reason := credentialFile(v); reason != "" {
		return reason
	}
	// Paths inside option values: --data-binary=@/proc/self/environ, -F f=@x.
	if i := strings.LastIndexAny(v, "=@:"); i >= 0 && i+1 < len(v) {
		if reason := credentialFile(v[i+1:]); reason != "" {
			return reason
		}
	}
	switch {
	case strings.Contains(v, "/etc/shadow") || strings.Contains(v, "/etc/gshadow"):
		return "password hashes"
	case strings.Contains(v, "/proc/") && strings.Contains(v, "/environ"):
		return "a process environment"
	case embeddedKey.MatchString(v):
		return "an SSH private key"
	}
	return ""
}

// embeddedKey finds a private key path inside a longer argument.
var embeddedKey = regexp.MustCompile(`\.ssh/id_[a-z0-9_]+([^a-z0-9_.]|$)`)

// credentialDirs are per-user directories that hold keys and tokens.
var credentialDirs = setOf(".ssh", ".aws", ".gnupg", ".kube", ".docker", ".password-store")

// credentialFile explains why the path p names a secret, or returns "".
func credentialFile(v string) string {
	c := cleanPath(v)
	base := path.Base(c)
	dir := path.Dir(c)
	outside := strings.HasPrefix(c, "/") || strings.HasPrefix(c, "~")
	switch {
	case base == "environ":
		return "a process environment"
	case strings.HasPrefix(c, "/proc/") && base == "mem", c == "/dev/mem", c == "/dev/kmem", c == "/dev/port":
		return "process memory"
	case outside && credentialDirs[base]:
		return "a directory of keys or tokens"
	case strings.HasPrefix(c, "/etc/shadow") || strings.HasPrefix(c, "/etc/gshadow") || c == "/etc/security/opasswd":
		return "password hashes"
	case strings.HasPrefix(c, "/etc/ssh/") && strings.HasPrefix(base, "ssh_host_") && !strings.HasSuffix(base, ".pub"):
		return "an SSH host key"
	case (path.Base(dir) == ".ssh" || strings.HasSuffix(dir, "/.ssh")) && !strings.HasSuffix(base, ".pub") &&
		(strings.HasPrefix(base, "id_") || strings.ContainsAny(base, "*?[")):
		return "an SSH private key"
	case outside && sshKeyName.MatchString(base):
		return "an SSH private key"
	}
	if outside {
		for _, s := range credentialSuffixes {
			if strings.HasSuffix(c, "/"+s) || c == "~/"+s || strings.Contains(c, "/"+s+"/") {
				return "a credentials file"
			}
		}
	}
	for _, s := range credentialSamples {
		if matchPattern(c, s) {
			return "a secrets file"
		}
	}
	return ""
}

// systemDirs are top-level directories of the system.
var systemDirs = setOf("/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32",
	"/media", "/mnt", "/opt", "/proc", "/root", "/run", "/sbin", "/snap", "/srv", "/sys", "/usr", "/var", "/tmp",
	"/usr/bin", "/usr/lib", "/usr/local", "/usr/sbin", "/usr/share", "/var/lib", "/var/log")

// outsideTarget explains why a path an operation would recursively change
// or delete reaches outside the workspace, or returns "".
func outsideTarget(a arg) string {
	if a.head {
		return "a path only known at run time"
	}
	v := a.val
	if v == "" {
		return ""
	}
	if a.tilde || strings.HasPrefix(v, "~") {
		return "the home directory"
	}
	c := cleanPath(v)
	if strings.HasPrefix(c, "/") {
		if tmpChild(c) {
			return ""
		}
		return "a path outside the workspace"
	}
	if c == ".." || strings.HasPrefix(c, "../") {
		return "a path outside the working directory"
	}
	return ""
}

// tmpChild reports whether c is a named entry below /tmp or /var/tmp.
func tmpChild(c string) bool {
	for _, tmp := range []string{"/tmp/", "/var/tmp/"} {
		if rest, ok := strings.CutPrefix(c, tmp); ok {
			first, _, _ := strings.Cut(rest, "/")
			return first != "" && !strings.ContainsAny(first, "*?[")
		}
	}
	return false
}

// wholeDir reports whether a names everything in the working directory.
func wholeDir(a arg) bool {
	switch cleanPath(a.val) {
	case ".", "*", ".*", "**", "*.*":
		return true
	}
	return false
}

// systemTarget reports whether a is the root or a top-level system directory.
func systemTarget(a arg) bool {
	c := cleanPath(a.val)
	if systemDirs[c] || c == "/*" {
		return true
	}
	return strings.HasPrefix(c, "/") && strings.Count(c, "/") == 1 && strings.ContainsAny(c, "*?[")
}
