package shellguard

import (
	"slices"
	"strings"
)

// wrapperSpec describes how a wrapper program (env, nice, sudo…) finds the
// command it runs among its arguments.
type wrapperSpec struct {
	argOpts    string   // short options that take a value: -n 10, -n10
	longArg    []string // long options that take a value: --user root, --user=root
	positional int      // operands before the command: timeout DURATION cmd
	noCmdOpts  string   // short options after which no command runs: command -v
	assigns    bool     // NAME=VALUE operands come before the command (env)
	numericOpt bool     // -N is an option (nice -10 cmd)
	privileged bool     // runs the command as another user
	applet     bool     // the first operand is the program (busybox rm …)
}

// wrappers are the programs the guard looks through to the command they run.
var wrappers = map[string]wrapperSpec{
	"env":         {argOpts: "uCP", longArg: []string{"unset", "chdir"}, assigns: true},
	"command":     {noCmdOpts: "vV"},
	"builtin":     {},
	"exec":        {argOpts: "a"},
	"nice":        {argOpts: "n", longArg: []string{"adjustment"}, numericOpt: true},
	"nohup":       {},
	"timeout":     {argOpts: "sk", longArg: []string{"signal", "kill-after"}, positional: 1},
	"stdbuf":      {argOpts: "ioe", longArg: []string{"input", "output", "error"}},
	"setsid":      {},
	"ionice":      {argOpts: "cn", longArg: []string{"class", "classdata"}, noCmdOpts: "pPu"},
	"chroot":      {longArg: []string{"userspec", "groups"}, positional: 1},
	"chrt":        {argOpts: "T", positional: 1, noCmdOpts: "p"},
	"taskset":     {positional: 1, noCmdOpts: "p"},
	"time":        {argOpts: "fo", longArg: []string{"format", "output"}},
	"unbuffer":    {},
	"fakeroot":    {argOpts: "is", longArg: []string{"lib", "faked"}},
	"torsocks":    {argOpts: "uPa", longArg: []string{"user", "pass", "address", "port"}},
	"proxychains": {argOpts: "f"}, "proxychains4": {argOpts: "f"},
	"catchsegv":   {},
	"unshare":     {argOpts: "SGRw", longArg: []string{"setuid", "setgid", "root", "wd", "map-user", "map-group"}},
	"nsenter":     {argOpts: "tSGrw", longArg: []string{"target", "setuid", "setgid", "root", "wd"}},
	"systemd-run": {argOpts: "pEMHu", longArg: []string{"unit", "property", "description", "slice", "uid", "gid", "nice", "working-directory", "setenv", "machine", "host"}},
	"firejail":    {},
	"sudo": {argOpts: "ugCDhprtTUR", longArg: []string{"user", "group", "close-from", "chdir", "host", "prompt",
		"role", "type", "command-timeout", "other-user", "chroot"}, noCmdOpts: "elvV", privileged: true},
	"doas":     {argOpts: "uC", noCmdOpts: "L", privileged: true},
	"pkexec":   {longArg: []string{"user"}, privileged: true},
	"runuser":  {argOpts: "ugGsw", longArg: []string{"user", "group", "supp-group", "shell", "whitelist-environment"}, privileged: true},
	"flock":    {argOpts: "wE", longArg: []string{"timeout", "conflict-exit-code"}, positional: 1},
	"strace":   {argOpts: "eoOpsuEPSXIab", longArg: []string{"output", "user", "trace", "signal", "env", "string-limit"}},
	"ltrace":   {argOpts: "eoOpsuEPSXIanlxAD", longArg: []string{"output", "user", "library"}},
	"valgrind": {},
	"setpriv": {longArg: []string{"reuid", "regid", "ruid", "euid", "rgid", "egid", "groups", "inh-caps", "ambient-caps",
		"bounding-set", "securebits", "pdeathsig", "selinux-label", "apparmor-profile", "landlock-access", "landlock-rule"}, noCmdOpts: "d"},
	"prlimit":          {argOpts: "p", longArg: []string{"pid"}},
	"dbus-run-session": {longArg: []string{"config-file", "dbus-daemon"}},
	"ssh-agent":        {argOpts: "aEOPt"},
	// setarch's per-architecture names run like setarch without the ARCH.
	"linux32": {}, "linux64": {}, "i386": {}, "i686": {}, "x86_64": {}, "uname26": {}, "aarch64": {}, "arm64": {},
	"busybox": {applet: true},
	"toybox":  {applet: true},
}

// unwrapSpec returns the command a wrapper runs, if any.
func unwrapSpec(args []arg, spec wrapperSpec) ([]arg, bool) {
	if spec.applet {
		if len(args) == 0 || (args[0].lit && strings.HasPrefix(args[0].val, "-")) {
			return nil, false
		}
		return args, true
	}
	i := 0
scan:
	for i < len(args) {
		a := args[i]
		if !a.lit {
			break
		}
		v := a.val
		switch {
		case v == "--":
			i++
			break scan
		case strings.HasPrefix(v, "--") && len(v) > 2:
			name, _, hasValue := strings.Cut(v[2:], "=")
			i++
			if !hasValue && slices.Contains(spec.longArg, name) {
				i++
			}
		case strings.HasPrefix(v, "-") && len(v) > 1:
			i++
			if spec.numericOpt && isDigits(strings.TrimPrefix(v[1:], "-")) {
				continue
			}
			for j := 1; j < len(v); j++ {
				if strings.IndexByte(spec.noCmdOpts, v[j]) >= 0 {
					return nil, false
				}
				if strings.IndexByte(spec.argOpts, v[j]) >= 0 {
					if j == len(v)-1 {
						i++
					}
					break
				}
			}
		case spec.assigns && isAssignment(v):
			i++
		default:
			break scan
		}
	}
	i += spec.positional
	if i >= len(args) {
		return nil, false
	}
	return args[i:], true
}

// isAssignment reports whether s looks like NAME=VALUE.
func isAssignment(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c == '%' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9')) {
			return false
		}
	}
	return true
}

// xargsCommand returns the command xargs runs, with the arguments it reads
// from its input represented as unknown.
func xargsCommand(args []arg) []arg {
	i := 0
	replace := ""
scan:
	for i < len(args) {
		a := args[i]
		if !a.lit {
			break
		}
		v := a.val
		switch {
		case v == "--":
			i++
			break scan
		case strings.HasPrefix(v, "--"):
			name, val, hasValue := strings.Cut(v[2:], "=")
			i++
			switch name {
			case "replace":
				replace = "{}"
				if hasValue {
					replace = val
				}
			case "arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var":
				if !hasValue {
					i++
				}
			}
		case strings.HasPrefix(v, "-") && len(v) > 1:
			i++
			for j := 1; j < len(v); j++ {
				switch ch := v[j]; {
				case ch == 'I':
					replace = v[j+1:]
					if replace == "" && i < len(args) {
						replace = args[i].val
						i++
					}
				case ch == 'i':
					replace = "{}"
					if v[j+1:] != "" {
						replace = v[j+1:]
					}
				case strings.IndexByte("adELnPs", ch) >= 0:
					if j == len(v)-1 {
						i++
					}
				case strings.IndexByte("el", ch) >= 0:
					// optional value, attached only
				default:
					continue
				}
				break
			}
		default:
			break scan
		}
	}
	cmd := slices.Clone(args[min(i, len(args)):])
	if len(cmd) == 0 {
		cmd = []arg{literalArg("echo")}
	}
	if replace == "" {
		return append(cmd, unknownArg())
	}
	for k := range cmd {
		if k > 0 && strings.Contains(cmd[k].val, replace) {
			u := unknownArg()
			u.head = strings.HasPrefix(cmd[k].val, replace)
			u.val = strings.ReplaceAll(cmd[k].val, replace, unknownPart)
			cmd[k] = u
		}
	}
	return cmd
}

// unwrap returns the command that prog runs when it is a wrapper the guard
// understands without special rules.
func unwrap(prog string, args []arg) ([]arg, bool) {
	if prog == "xargs" {
		return xargsCommand(args), true
	}
	if prog == "setarch" {
		// setarch ARCH [flags] [program [args]]: the architecture first.
		if len(args) > 0 && args[0].lit && !strings.HasPrefix(args[0].val, "-") {
			args = args[1:]
		}
		return unwrapSpec(args, wrapperSpec{})
	}
	spec, ok := wrappers[prog]
	if !ok {
		return nil, false
	}
	return unwrapSpec(args, spec)
}

// chain returns the program names a command line runs through its
// wrappers: `sudo nice curl x` → sudo, nice, curl.
func chain(argv []arg) []string {
	var names []string
	for steps := 0; steps < 32 && len(argv) > 0 && argv[0].known(); steps++ {
		prog := programName(argv[0].val)
		names = append(names, prog)
		inner, ok := unwrap(prog, argv[1:])
		if !ok {
			break
		}
		argv = inner
	}
	return names
}

// parallelCommand returns the command GNU parallel runs: its words up to
// ::: with the input values (known after ::: or unknown from stdin) as
// arguments.
func parallelCommand(args []arg) []arg {
	i := 0
	for i < len(args) && args[i].lit && strings.HasPrefix(args[i].val, "-") {
		v := args[i].val
		i++
		if strings.HasPrefix(v, "--") && !strings.Contains(v, "=") && slices.Contains([]string{"--jobs", "--arg-file", "--delimiter", "--sshlogin", "--max-args", "--timeout", "--joblog", "--results"}, v) {
			i++
		} else if len(v) == 2 && strings.IndexByte("jadSnI", v[1]) >= 0 {
			i++
		}
	}
	var cmd, values []arg
	sep := false
	for _, a := range args[min(i, len(args)):] {
		if a.lit && (a.val == ":::" || a.val == "::::" || a.val == ":::+") {
			sep = true
			continue
		}
		if sep {
			values = append(values, a)
		} else {
			cmd = append(cmd, a)
		}
	}
	if len(cmd) == 0 {
		// Each input line is a command.
		return []arg{unknownArg()}
	}
	if len(values) == 0 || slices.ContainsFunc(args, func(a arg) bool { return a.val == "::::" }) {
		values = []arg{unknownArg()}
	}
	return append(slices.Clone(cmd), values...)
}
