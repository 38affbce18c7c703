package shellguard

import (
	"path"
	"strings"
)

// crontabInstall checks `crontab FILE`, `crontab -` and a crontab fed on
// stdin: installing a crontab makes commands run later, unwatched, so it
// is always a warning, and the commands of a crontab the guard can read
// are checked like any other.
func (c *checker) crontabInstall(args []arg, in stdin, depth int) {
	for _, a := range args {
		if a.lit && len(a.val) > 1 && a.val[0] == '-' && strings.ContainsAny(a.val[1:], "lre") {
			return // list, remove (a rule judges it) or edit interactively
		}
	}
	_, ops := splitOperands(args, "uc")
	c.warn("installs a crontab: its commands run later on a schedule, without asking")
	if len(ops) == 0 || ops[0].lit && (ops[0].val == "-" || stdinPaths[ops[0].val]) {
		c.stdinProgram("crontab", "crontab", in, depth)
		return
	}
	if ops[0].proc != nil {
		c.procCode("crontab", ops[0].proc)
	}
}

// crontabText checks the command of every job line of a crontab.
func (c *checker) crontabText(text string, depth int) {
	for _, line := range strings.Split(text, "\n") {
		if c.verdict != nil {
			return
		}
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		first := fields[0]
		if !strings.ContainsAny(first[:1], "0123456789*@") &&
			(strings.Contains(first, "=") || len(fields) > 1 && strings.HasPrefix(fields[1], "=")) {
			continue // NAME=value
		}
		skip := 5
		if strings.HasPrefix(fields[0], "@") {
			skip = 1
		}
		if len(fields) <= skip {
			continue
		}
		// The command is the rest of the line; % ends it (the rest is stdin).
		cmd := strings.Join(fields[skip:], " ")
		if i := strings.IndexByte(cmd, '%'); i >= 0 {
			cmd = cmd[:i]
		}
		c.script(cmd, depth+1, stdin{kind: stdinNull})
	}
}

// startupFiles are files a shell, a desktop session or sshd reads and runs
// later: writing them plants commands that run unasked.
var startupFiles = setOf(".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zshenv",
	".zprofile", ".zlogin", ".zlogout", ".cshrc", ".tcshrc", ".login", ".kshrc", ".mkshrc", ".xprofile", ".xinitrc",
	".xsession", ".xsessionrc", ".pam_environment", ".inputrc", "config.fish")

// startupDirs hold files that run commands later (cron jobs, services,
// autostart entries, login scripts).
var startupDirs = []string{"/etc/profile.d/", "/etc/cron", "/var/spool/cron/", "/etc/systemd/", "/lib/systemd/",
	"/usr/lib/systemd/", "/etc/init.d/", "/etc/rc", "/etc/xdg/autostart/", "/etc/update-motd.d/",
	".config/autostart/", ".config/systemd/", ".config/fish/", ".ssh/rc", ".ssh/environment", ".ssh/config",
	".local/share/systemd/", ".config/environment.d/"}

// persistencePath explains why writing a names a file that runs commands
// later (a shell startup file, a cron or systemd directory), or "".
func persistencePath(a arg) string {
	c := cleanPath(a.val)
	base := path.Base(c)
	if startupFiles[base] || c == "/etc/profile" || c == "/etc/bash.bashrc" || c == "/etc/environment" ||
		c == "/etc/rc.local" || c == "/etc/crontab" {
		return "a shell startup file"
	}
	dir := c + "/" // the directory itself counts: cp x ~/.config/autostart
	for _, d := range startupDirs {
		if strings.HasPrefix(dir, d) || strings.Contains(dir, "/"+d) {
			return "a file that runs commands later (cron, services, autostart)"
		}
	}
	// A pattern (~/.b*rc, $DIR/.bashrc) that could name a startup file.
	if strings.Contains(c, unknownPart) || strings.ContainsAny(c, "?[") {
		for name := range startupFiles {
			if matchPattern(base, name) {
				return "a shell startup file"
			}
		}
	}
	return ""
}

// systemDirPrefixes hold the system's programs, libraries, configuration
// and state: overwriting a file there is a warning.
var systemDirPrefixes = []string{"/etc/", "/boot/", "/usr/", "/bin/", "/sbin/", "/lib/", "/lib32/", "/lib64/",
	"/libx32/", "/var/lib/", "/var/log/", "/var/spool/", "/var/cache/", "/var/mail/", "/opt/", "/srv/", "/root/"}

// systemFile reports whether p is a file under a system directory.
func systemFile(p string) bool {
	c := cleanPath(p)
	for _, d := range systemDirPrefixes {
		if strings.HasPrefix(c, d) {
			return true
		}
	}
	return false
}
