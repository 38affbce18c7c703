package shellguard

import (
	"regexp"
	"strings"
)

// writePath blocks writing to sockets, devices, kernel control files,
// privilege files and secrets.
func (c *checker) writePath(a arg, what string) {
	switch {
	case netDevice(a.val):
		c.block(CategoryReverseShell, "writing "+what+" to a network socket")
	case blockDevice(a.val):
		c.block(CategoryDisk, "writing "+what+" to a device")
	case kernelControl(a.val):
		c.block(CategorySystemControl, "writing "+what+" to a kernel control file")
	case protectedPath(a) != "":
		c.block(CategoryPrivilege, "writing "+what+" to "+protectedPath(a))
	case credentialPath(a) != "":
		c.block(CategoryCredentials, "writing "+what+" to "+credentialPath(a))
	case persistencePath(a) != "":
		c.block(CategoryPersistence, "writing "+what+" to "+persistencePath(a))
	case systemFile(a.val):
		c.warn("writes to a system file")
	}
}

// readPath blocks reading secrets.
func (c *checker) readPath(a arg) {
	if reason := credentialPath(a); reason != "" {
		c.block(CategoryCredentials, "reading "+reason)
	}
}

// kernelControl reports whether p is a file that makes the kernel act
// (SysRq crash/reboot, suspend).
func kernelControl(p string) bool {
	c := cleanPath(p)
	for _, f := range []string{"/proc/sysrq-trigger", "/sys/power/state", "/proc/sys/kernel/sysrq"} {
		if c == f || matchPattern(c, f) {
			return true
		}
	}
	return false
}

// setuidMode matches chmod modes that set the setuid or setgid bit.
var setuidMode = regexp.MustCompile(`^([0-7]?[2-7][0-7]{3}|[ugoa]*[+=][rwxXst]*s[rwxXst]*)$`)

// negativeMode matches chmod modes that start with a dash (-w, -x).
var negativeMode = regexp.MustCompile(`^-[rwxXst]+$`)

// chmod blocks chmod/chown/chgrp on the root or system directories,
// recursive changes outside the workspace, setuid bits and privilege files.
func (c *checker) chmod(args []arg) {
	var opts, ops []arg
	for i, a := range args {
		if a.lit && a.val == "--" {
			ops = append(ops, args[i+1:]...)
			break
		}
		// chmod modes like -w look like options.
		if a.lit && strings.HasPrefix(a.val, "-") && !negativeMode.MatchString(a.val) {
			opts = append(opts, a)
			continue
		}
		ops = append(ops, a)
	}
	recursive := hasShortFlag(opts, 'R') || hasLong(opts, "recursive")
	for _, o := range opts {
		ref, ok := strings.CutPrefix(o.val, "--reference=")
		if o.val == "--reference" && len(ops) > 0 {
			o, ref, ok = ops[0], ops[0].val, true // --reference FILE MODE-less operands
		}
		if ok && (outsideTarget(withVal(o, ref)) != "" || !o.lit) {
			c.block(CategoryPrivilege, "copying the mode or owner of a file outside the workspace (it may be setuid)")
			return
		}
	}
	targets := ops
	if len(ops) > 0 && !hasLong(opts, "reference") {
		for _, clause := range strings.Split(ops[0].val, ",") {
			if setuidMode.MatchString(clause) {
				c.block(CategoryPrivilege, "setting the setuid/setgid bit")
				return
			}
		}
		targets = ops[1:]
	}
	for _, t := range targets {
		switch {
		case systemTarget(t):
			c.block(CategoryDestructive, "changing permissions of a system directory")
		case recursive && outsideTarget(t) != "":
			c.block(CategoryDestructive, "recursive permission change on "+outsideTarget(t))
		case recursive && c.cwdOutside:
			c.block(CategoryDestructive, "recursive permission change after changing to a directory outside the workspace")
		case protectedPath(t) != "":
			c.block(CategoryPrivilege, "changing permissions of "+protectedPath(t))
		case blockDevice(t.val):
			c.block(CategoryDisk, "changing permissions of a device")
		}
		if c.verdict != nil {
			return
		}
	}
}

// writesAll checks every operand of tee and truncate as a written file.
func (c *checker) writesAll(args []arg) {
	_, ops := splitOperands(args, "sr", "size", "reference")
	for _, o := range ops {
		c.writePath(o, "a file")
	}
}

// copyLike checks the destination of cp, install, ln and rsync: the last
// operand, or the -t/--target-directory value.
func (c *checker) copyLike(args []arg) {
	for i, a := range args {
		if a.lit && (a.val == "-m" || a.val == "--mode") && i+1 < len(args) && setuidMode.MatchString(args[i+1].val) ||
			a.lit && strings.HasPrefix(a.val, "--mode=") && setuidMode.MatchString(strings.TrimPrefix(a.val, "--mode=")) {
			c.block(CategoryPrivilege, "installing a setuid/setgid program")
			return
		}
		if a.lit && a.val == "-t" && i+1 < len(args) {
			c.writePath(args[i+1], "a copy")
		}
		if rest, ok := strings.CutPrefix(a.val, "--target-directory="); ok && a.lit {
			c.writePath(withVal(a, rest), "a copy")
		}
	}
	_, ops := splitOperands(args, "tSmogeTfB", "target-directory", "suffix", "mode", "owner", "group", "rsh", "rsync-path")
	if len(ops) > 0 {
		c.writePath(ops[len(ops)-1], "a copy")
	}
}

// mv blocks moving the root, system directories or the home directory
// away, and checks the destination like cp.
func (c *checker) mv(args []arg) {
	_, ops := splitOperands(args, "tS", "target-directory", "suffix")
	for i, o := range ops {
		if i < len(ops)-1 && (systemTarget(o) || o.tilde && cleanPath(o.val) == "~") {
			c.block(CategoryDestructive, "moving a system directory")
			return
		}
	}
	c.copyLike(args)
}

// sed checks files edited in place.
func (c *checker) sed(args []arg) {
	for _, script := range sedScripts(args) {
		if sedExecutes(script) {
			c.block(CategoryEvalInjection, "sed runs text as a shell command (the e command or flag)")
			return
		}
	}
	inPlace := hasLong(args, "in-place")
	scriptGiven := false
	for _, a := range args {
		if a.lit && strings.HasPrefix(a.val, "-i") {
			inPlace = true
		}
		if a.lit && (a.val == "-e" || a.val == "-f" || strings.HasPrefix(a.val, "--expression") || strings.HasPrefix(a.val, "--file")) {
			scriptGiven = true
		}
	}
	if !inPlace {
		return
	}
	_, ops := splitOperands(args, "efl", "expression", "file", "line-length")
	if !scriptGiven && len(ops) > 0 {
		ops = ops[1:]
	}
	for _, o := range ops {
		c.writePath(o, "an in-place edit")
	}
}

// container blocks docker/podman runs that hand the container the host:
// --privileged, or the host root mounted as a volume.
func (c *checker) container(args []arg) {
	for i, a := range args {
		v := a.val
		switch {
		case v == "--privileged" || v == "--pid=host" || v == "--pid" && i+1 < len(args) && args[i+1].val == "host":
			c.block(CategoryPrivilege, "a container with access to the host")
			return
		case v == "-v" || v == "--volume" || v == "--mount":
			if i+1 < len(args) && hostRootMount(args[i+1].val) {
				c.block(CategoryPrivilege, "a container with the host file system mounted")
				return
			}
		case strings.HasPrefix(v, "--volume=") || strings.HasPrefix(v, "--mount=") || strings.HasPrefix(v, "-v") && len(v) > 2:
			_, val, ok := strings.Cut(v, "=")
			if !ok {
				val = v[2:]
			}
			if hostRootMount(val) {
				c.block(CategoryPrivilege, "a container with the host file system mounted")
				return
			}
		}
	}
}

// hostRootMount reports whether a volume spec mounts / or a system directory.
func hostRootMount(spec string) bool {
	src, _, _ := strings.Cut(spec, ":")
	if strings.Contains(spec, "source=") || strings.Contains(spec, "src=") {
		for _, part := range strings.Split(spec, ",") {
			if k, v, ok := strings.Cut(part, "="); ok && (k == "source" || k == "src") {
				src = v
			}
		}
	}
	return systemTarget(literalArg(src)) || src == "/var/run/docker.sock" || src == "/run/docker.sock"
}
