package shellguard

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// rule checks the arguments of one program and blocks what is clearly
// destructive. Everything it lets through still goes to the approvers.
type rule func(c *checker, args []arg)

// rules maps program names to their rules.
var rules map[string]rule

func init() {
	always := func(category, reason string) rule {
		return func(c *checker, _ []arg) { c.block(category, reason) }
	}
	rules = map[string]rule{
		"rm":         (*checker).rm,
		"shred":      always(CategoryDestructive, "shred destroys file contents"),
		"wipefs":     always(CategoryDisk, "wipefs erases file system signatures"),
		"mke2fs":     always(CategoryDisk, "mke2fs formats a file system"),
		"mkswap":     always(CategoryDisk, "mkswap formats a device"),
		"mkdosfs":    always(CategoryDisk, "mkdosfs formats a file system"),
		"mkntfs":     always(CategoryDisk, "mkntfs formats a file system"),
		"blkdiscard": always(CategoryDisk, "blkdiscard erases a device"),
		"dd":         (*checker).dd,
		"shutdown":   always(CategorySystemControl, "shutdown stops the machine"),
		"reboot":     always(CategorySystemControl, "reboot restarts the machine"),
		"halt":       always(CategorySystemControl, "halt stops the machine"),
		"poweroff":   always(CategorySystemControl, "poweroff stops the machine"),
		"kexec":      always(CategorySystemControl, "kexec replaces the running kernel"),
		"killall5":   always(CategorySystemControl, "killall5 kills every process"),
		"init":       (*checker).runlevel,
		"telinit":    (*checker).runlevel,
		"systemctl":  (*checker).systemctl,
		"loginctl":   (*checker).systemctl,
		"kill":       (*checker).kill,
		"pkill":      (*checker).pkill,
		"killall":    (*checker).pkill,
		"nc":         (*checker).netcat,
		"ncat":       (*checker).netcat,
		"netcat":     (*checker).netcat,
		"socat":      (*checker).socat,
		"chmod":      (*checker).chmod,
		"chown":      (*checker).chmod,
		"chgrp":      (*checker).chmod,
		"crontab":    (*checker).crontab,
		"iptables":   (*checker).iptables, "ip6tables": (*checker).iptables,
		"iptables-legacy": (*checker).iptables, "iptables-nft": (*checker).iptables,
		"nft":      (*checker).nft,
		"unlink":   (*checker).writesAll,
		"setcap":   always(CategoryPrivilege, "setcap grants capabilities to a program"),
		"ps":       (*checker).ps,
		"docker":   (*checker).container,
		"podman":   (*checker).container,
		"tee":      (*checker).writesAll,
		"truncate": (*checker).writesAll,
		"cp":       (*checker).copyLike, "install": (*checker).copyLike, "ln": (*checker).copyLike,
		"rsync": (*checker).copyLike,
		"mv":    (*checker).mv,
		"sed":   (*checker).sed,
		"alias": (*checker).alias,
		"hash":  (*checker).hash,
		"enable": func(c *checker, args []arg) {
			if hasShortFlag(args, 'f') {
				c.block(CategoryEvalInjection, "enable -f loads code into the shell")
			}
		},
		"gdb":    (*checker).debugger,
		"strace": (*checker).debugger,
		"ltrace": (*checker).debugger,
	}
}

// splitOperands separates options from operands. argOpts are short options
// taking a value; longArg are long options taking a value.
func splitOperands(args []arg, argOpts string, longArg ...string) (opts, ops []arg) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		v := a.val
		switch {
		case !a.lit || v == "-" || !strings.HasPrefix(v, "-"):
			ops = append(ops, a)
		case v == "--":
			ops = append(ops, args[i+1:]...)
			return opts, ops
		case strings.HasPrefix(v, "--"):
			opts = append(opts, a)
			name, _, hasValue := strings.Cut(v[2:], "=")
			if !hasValue && slices.Contains(longArg, name) {
				i++
			}
		default:
			opts = append(opts, a)
			for j := 1; j < len(v); j++ {
				if strings.IndexByte(argOpts, v[j]) >= 0 {
					if j == len(v)-1 {
						i++
					}
					break
				}
			}
		}
	}
	return opts, ops
}

// hasShortFlag reports whether a short option cluster sets flag.
func hasShortFlag(args []arg, flag byte) bool {
	for _, a := range args {
		if a.lit && a.val == "--" {
			return false
		}
		if a.lit && len(a.val) > 1 && a.val[0] == '-' && a.val[1] != '-' && strings.IndexByte(a.val[1:], flag) >= 0 {
			return true
		}
	}
	return false
}

// hasLong reports whether a long option is present (with or without value).
func hasLong(args []arg, name string) bool {
	for _, a := range args {
		if a.lit && (a.val == "--"+name || strings.HasPrefix(a.val, "--"+name+"=")) {
			return true
		}
	}
	return false
}

// rm blocks recursive or forced deletion of the root, the home directory,
// system paths, anything outside the workspace, or the whole working
// directory. Plain deletions of workspace files go to the approvers.
func (c *checker) rm(args []arg) {
	opts, ops := splitOperands(args, "")
	recursive := hasShortFlag(opts, 'r') || hasShortFlag(opts, 'R') || hasLong(opts, "recursive")
	force := hasShortFlag(opts, 'f') || hasLong(opts, "force")
	if hasLong(opts, "no-preserve-root") {
		c.block(CategoryDestructive, "rm --no-preserve-root")
		return
	}
	unknownFlags := false
	for _, o := range ops {
		if !o.lit && o.head {
			unknownFlags = true // could expand to -rf
		}
	}
	for _, o := range ops {
		switch {
		case o.head && recursive:
			c.block(CategoryDestructive, "rm -r on a path only known at run time")
		case o.head:
		case (recursive || force || unknownFlags) && (outsideTarget(o) != "" || systemTarget(o)):
			c.block(CategoryDestructive, "rm -r/-f on "+orDefault(outsideTarget(o), "a system directory"))
		case (recursive || force || unknownFlags) && wholeDir(o):
			c.block(CategoryDestructive, "rm -r/-f on the whole working directory")
		case (recursive || force) && c.cwdOutside:
			c.block(CategoryDestructive, "rm -r/-f after changing to a directory outside the workspace")
		default:
			if reason := protectedPath(o); reason != "" {
				c.block(CategoryPrivilege, "rm on "+reason)
			}
		}
		if c.verdict != nil {
			return
		}
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// dd blocks writing to devices and privilege files.
func (c *checker) dd(args []arg) {
	for _, a := range args {
		if rest, ok := strings.CutPrefix(a.val, "of="); ok {
			if !a.lit || a.glob {
				c.block(CategoryDisk, "dd writes to a target only known at run time (it could be a disk)")
				return
			}
			c.writePath(withVal(a, rest), "dd output")
		}
	}
}

// runlevel blocks init/telinit switching to halt, reboot or single user.
func (c *checker) runlevel(args []arg) {
	for _, a := range args {
		switch a.val {
		case "0", "6", "1", "s", "S", "single", "emergency":
			c.block(CategorySystemControl, "changing the runlevel stops the system")
			return
		}
	}
}

// systemctl blocks power and rescue-mode verbs of systemctl and loginctl.
func (c *checker) systemctl(args []arg) {
	_, ops := splitOperands(args, "HMpsnt", "host", "machine", "property", "signal", "lines", "type", "state", "root")
	if len(ops) == 0 {
		return
	}
	switch ops[0].val {
	case "poweroff", "reboot", "halt", "kexec", "suspend", "hibernate", "hybrid-sleep", "suspend-then-hibernate",
		"emergency", "rescue", "soft-reboot", "default":
		c.block(CategorySystemControl, "systemctl "+ops[0].val)
	case "isolate":
		for _, t := range ops[1:] {
			if strings.Contains(t.val, "poweroff") || strings.Contains(t.val, "reboot") || strings.Contains(t.val, "halt") ||
				strings.Contains(t.val, "rescue") || strings.Contains(t.val, "emergency") || strings.HasPrefix(t.val, "runlevel") {
				c.block(CategorySystemControl, "systemctl isolate")
			}
		}
	}
}

// kill blocks killing every process (-1), init (1), or the daemon that runs
// the command ($PPID).
func (c *checker) kill(args []arg) {
	if len(args) == 1 && args[0].val == "-1" {
		c.block(CategorySystemControl, "kill -1")
		return
	}
	var pids []arg
	signal := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		v := a.val
		switch {
		case !a.lit:
			pids = append(pids, a)
		case v == "--":
			pids = append(pids, args[i+1:]...)
			i = len(args)
		case v == "-l" || v == "-L" || v == "--list" || v == "-t" || v == "--table":
			return
		case v == "-s" || v == "-n" || v == "--signal":
			i++
			signal = true
		case strings.HasPrefix(v, "-") && !signal && len(pids) == 0:
			signal = true
		default:
			pids = append(pids, a)
		}
	}
	for _, p := range pids {
		switch pid := canonicalPID(p.val); {
		case pid == "-1":
			c.block(CategorySystemControl, "kill -1 kills every process")
		case pid == "1":
			c.block(CategorySystemControl, "killing init")
		case p.word != nil && mentionsVar(p, "PPID"):
			c.block(CategorySystemControl, "killing the daemon that runs this command")
		}
	}
}

// mentionsVar reports whether a's word expands the named variable.
func mentionsVar(a arg, name string) bool {
	found := false
	syntax.Walk(a.word, func(n syntax.Node) bool {
		if pe, ok := n.(*syntax.ParamExp); ok && pe.Param != nil && pe.Param.Value == name {
			found = true
		}
		return !found
	})
	return found
}

// pkill blocks pkill/killall aimed at init, systemd, this daemon or every
// process.
func (c *checker) pkill(args []arg) {
	if rootOwner(args) {
		c.block(CategorySystemControl, "killing every process of root")
		return
	}
	_, ops := splitOperands(args, "gGPsStuUFn", "signal", "group", "pgroup", "parent", "session", "terminal",
		"euid", "uid", "pidfile", "ns", "nslist", "user", "older-than", "younger-than", "context")
	for _, o := range ops {
		switch strings.TrimSuffix(strings.TrimPrefix(o.val, "^"), "$") {
		case "init", "systemd", "switchboard", "", ".", ".*", "-1":
			c.block(CategorySystemControl, "killing essential processes")
			return
		}
	}
}

// rootOwner reports whether pkill/killall select processes by an owner list
// that includes root (-u 0, -U root, --euid=0, --user root).
func rootOwner(args []arg) bool {
	for i, a := range args {
		v := a.val
		var list string
		switch {
		case v == "-u" || v == "-U" || v == "--euid" || v == "--uid" || v == "--user":
			list = nextVal(args, i)
		case strings.HasPrefix(v, "--euid=") || strings.HasPrefix(v, "--uid=") || strings.HasPrefix(v, "--user="):
			_, list, _ = strings.Cut(v, "=")
		case len(v) > 2 && (strings.HasPrefix(v, "-u") || strings.HasPrefix(v, "-U")) && !strings.HasPrefix(v, "--"):
			list = v[2:]
		default:
			continue
		}
		for _, owner := range strings.Split(list, ",") {
			owner = strings.TrimLeft(owner, "0")
			if owner == "" || owner == "root" || owner == unknownPart {
				return true
			}
		}
	}
	return false
}

// netcat blocks nc -e / -c / --exec / --sh-exec: a shell wired to a socket.
func (c *checker) netcat(args []arg) {
	for _, a := range args {
		v := a.val
		if !a.lit {
			continue
		}
		if strings.HasPrefix(v, "--") {
			name, _, _ := strings.Cut(v[2:], "=")
			if name == "exec" || name == "sh-exec" || name == "lua-exec" {
				c.block(CategoryReverseShell, "netcat runs a program on a socket")
				return
			}
			continue
		}
		if strings.HasPrefix(v, "-") && strings.ContainsAny(v[1:], "ec") {
			c.block(CategoryReverseShell, "netcat runs a program on a socket")
			return
		}
	}
}

// socat blocks EXEC: and SYSTEM: addresses.
func (c *checker) socat(args []arg) {
	for _, a := range args {
		low := strings.ToLower(a.val)
		if strings.Contains(low, "exec:") || strings.Contains(low, "system:") || (!a.lit && strings.Contains(low, "exec")) {
			c.block(CategoryReverseShell, "socat runs a program on a socket")
			return
		}
	}
}

// crontab blocks crontab -r, which deletes every scheduled job.
func (c *checker) crontab(args []arg) {
	if hasShortFlag(args, 'r') {
		c.block(CategoryDestructive, "crontab -r deletes every scheduled job")
	}
}

// iptables blocks flushing the firewall rules.
func (c *checker) iptables(args []arg) {
	if hasShortFlag(args, 'F') || hasLong(args, "flush") {
		c.block(CategorySystemControl, "flushing the firewall rules")
	}
}

// nft blocks `nft flush ruleset`.
func (c *checker) nft(args []arg) {
	for i := 0; i+1 < len(args); i++ {
		if args[i].val == "flush" && args[i+1].val == "ruleset" {
			c.block(CategorySystemControl, "flushing the firewall rules")
			return
		}
	}
}

// alias blocks alias definitions: in a one-off command they only serve to
// disguise what runs.
func (c *checker) alias(args []arg) {
	for _, a := range args {
		if strings.Contains(a.val, "=") || !a.lit {
			c.block(CategoryEvalInjection, "alias definitions can disguise commands")
			return
		}
	}
}

// hash blocks hash -p, which makes a name run another program.
func (c *checker) hash(args []arg) {
	if hasShortFlag(args, 'p') {
		c.block(CategoryEvalInjection, "hash -p makes a name run another program")
	}
}

// debugger blocks attaching gdb/strace/ltrace to a running process, which
// reads its memory (the daemon's secrets).
func (c *checker) debugger(args []arg) {
	for i, a := range args {
		v := a.val
		if v == "-p" || v == "--pid" || strings.HasPrefix(v, "--pid=") || strings.HasPrefix(v, "--attach") ||
			(strings.HasPrefix(v, "-p") && isDigits(v[2:])) || (v == "attach" && i == 0) {
			c.block(CategoryCredentials, "attaching a debugger to a running process")
			return
		}
	}
}

// ps blocks BSD-style `ps e`, which prints the environment of processes —
// the daemon's secrets included.
func (c *checker) ps(args []arg) {
	for _, a := range args {
		if a.lit && !strings.HasPrefix(a.val, "-") && strings.Trim(a.val, "auxwwefjlvmsrTHSc") == "" && strings.Contains(a.val, "e") {
			c.block(CategoryCredentials, "ps e prints the environment of processes")
			return
		}
	}
}

// canonicalPID writes a numeric pid without leading zeros or a plus sign
// ("0001" and "+1" are 1 to kill, "-01" is -1); anything else is returned
// as it is.
func canonicalPID(v string) string {
	sign, digits := "", v
	switch {
	case strings.HasPrefix(v, "-"):
		sign, digits = "-", v[1:]
	case strings.HasPrefix(v, "+"):
		digits = v[1:]
	}
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return v
	}
	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		digits = "0"
	}
	return sign + digits
}
