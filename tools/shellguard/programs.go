package shellguard

import (
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// shells are programs that run shell code.
var shells = setOf("sh", "bash", "dash", "zsh", "ksh", "mksh", "lksh", "pdksh", "ash", "yash", "posh", "rbash",
	"fish", "csh", "tcsh")

// interpreterFamilies maps interpreters to the family that knows their flags.
var interpreterFamilies = map[string]string{
	"perl": "perl", "ruby": "ruby", "irb": "ruby", "node": "node", "nodejs": "node", "bun": "node", "deno": "node",
	"php": "php", "lua": "lua", "luajit": "lua", "Rscript": "r", "tclsh": "tcl", "wish": "tcl",
	"awk": "awk", "gawk": "awk", "mawk": "awk", "nawk": "awk", "jjs": "node", "pwsh": "pwsh", "powershell": "pwsh",
}

// pythonName matches python, python3, python3.12, pypy3…
var pythonName = regexp.MustCompile(`^(python|pypy)[0-9.]*$`)

// program dispatches one resolved program to the rules that apply to it.
func (c *checker) program(prog string, args []arg, in stdin, depth int) {
	if c.stop() {
		return
	}
	if c.programRules(prog, args, in, depth) {
		return
	}
	if c.builtinOrRunner(prog, args, in, depth) {
		return
	}
	c.wrapped(prog, args, in, depth)
}

// programRules applies the rules kept by program name: the per-program
// rules, options whose value is a command, editors that run shell
// commands, mkfs, and the shells, make and the interpreters, which run
// code. It reports true when prog needs no further look.
func (c *checker) programRules(prog string, args []arg, in stdin, depth int) (done bool) {
	if rule, ok := rules[prog]; ok {
		rule(c, args)
		if c.verdict != nil {
			return true
		}
	}
	if _, ok := commandOptionNames[prog]; ok || sshPrograms[prog] {
		c.commandOptions(prog, args, in, depth)
		if c.verdict != nil {
			return true
		}
	}
	if _, ok := editorShells[prog]; ok {
		c.editorCommands(prog, args, in, depth)
		if c.verdict != nil {
			return true
		}
	}
	if strings.HasPrefix(prog, "mkfs") {
		c.block(CategoryDisk, "mkfs formats a file system")
		return true
	}
	switch {
	case shells[prog]:
		c.shell(prog, args, in, depth)
	case makePrograms[prog]:
		c.makeCmd(prog, args, in, depth)
	case pythonName.MatchString(prog):
		c.interpreter(prog, "python", args, in, depth)
	case interpreterFamilies[prog] != "":
		c.interpreter(prog, interpreterFamilies[prog], args, in, depth)
	default:
		return false
	}
	return true
}

// builtinOrRunner checks the shell builtins and the programs that run
// code given to them (eval, source, trap, su, watch, at, find…). It
// reports true when prog needs no further look; false sends it on to
// wrapped, as a program that may run the rest of its arguments.
func (c *checker) builtinOrRunner(prog string, args []arg, in stdin, depth int) (done bool) {
	switch prog {
	case "eval":
		text, ok := joinArgs(args)
		if !ok {
			c.dynamicArgs("eval", args)
			return true
		}
		c.script(text, depth+1, in)
	case "source", ".":
		if len(args) > 0 {
			c.scriptFile(prog, args[0], in, depth)
		}
	case "trap":
		c.trap(args, in, depth)
	case "env":
		return c.env(args, in, depth)
	case "su", "runuser", "script", "flock", "sudo", "doas":
		return c.asUser(prog, args, in, depth)
	case "watch":
		c.watch(args, in, depth)
	case "sg":
		c.sg(args, in, depth)
	case "newgrp":
		// newgrp starts a shell that reads commands from stdin.
		c.stdinCode(prog, in, depth)
	case "crontab":
		c.crontabInstall(args, in, depth)
	case "cd", "pushd":
		if _, ops := splitOperands(args, ""); len(ops) > 0 && leavesWorkspace(ops[0]) {
			c.cwdOutside = true
		}
	case "at", "batch":
		// at and batch run the commands they read from stdin (or -f FILE).
		if !hasShortFlag(args, 'f') && !hasShortFlag(args, 'l') && !hasShortFlag(args, 'r') && !hasShortFlag(args, 'c') {
			c.stdinCode(prog, in, depth)
		}
	case "parallel":
		c.simple(parallelCommand(args), stdin{kind: stdinNull}, depth)
	case "find":
		c.find(args, in, depth)
	default:
		return false
	}
	return true
}

// env checks env -S's split string and the code variables env sets; it
// reports true when the split string was the command.
func (c *checker) env(args []arg, in stdin, depth int) (done bool) {
	if c.envSplitString(args, in, depth) {
		return true
	}
	for _, a := range args {
		if a.lit && isAssignment(a.val) {
			name, val, _ := strings.Cut(a.val, "=")
			c.codeVariable(name, literalArg(val), in, depth)
		}
	}
	return false
}

// asUser checks su, runuser, script, flock, sudo and doas: the script of
// their -c (or like) option, or the shell su and an interactive sudo or
// doas read from stdin. It reports false when the rest of args may be the
// command, for wrapped to check.
func (c *checker) asUser(prog string, args []arg, in stdin, depth int) (done bool) {
	if script, found := commandOption(prog, args); found {
		if !script.lit {
			c.dynamicCode(prog, script)
			return true
		}
		c.script(script.val, depth+1, in)
		return true
	}
	switch prog {
	case "su":
		// Without -c, su starts a shell that reads commands from stdin.
		c.stdinCode("su", in, depth)
		return true
	case "script":
		return true
	case "sudo", "doas":
		if _, ok := unwrap(prog, args); !ok && c.interactiveShell(args) {
			c.stdinCode(prog, in, depth)
			return true
		}
	}
	return false
}

// wrapped checks the command a wrapper program (nice, timeout, xargs,
// sudo…) runs, naming a privileged wrapper in the reason for a block.
func (c *checker) wrapped(prog string, args []arg, in stdin, depth int) {
	inner, ok := unwrap(prog, args)
	if !ok || len(inner) == 0 {
		return
	}
	before := c.verdict
	if prog == "xargs" {
		in = stdin{kind: stdinNull}
	}
	c.simple(inner, in, depth)
	if before == nil && c.verdict != nil && wrappers[prog].privileged {
		c.verdict.Reason += " (via " + prog + ")"
	}
}

// dynamicArgs blocks program text assembled from arguments that are only
// known at run time (eval "$X").
func (c *checker) dynamicArgs(prog string, args []arg) {
	for _, a := range args {
		if !a.lit {
			c.dynamicCode(prog, a)
			return
		}
	}
}

// interactiveShell reports whether sudo/doas, given no command, is asked
// for a shell (sudo -s, sudo -i, doas -s), which reads commands from stdin.
func (c *checker) interactiveShell(args []arg) bool {
	for _, a := range args {
		v := a.val
		if !a.lit || v == "--" {
			return false
		}
		if v == "--shell" || v == "--login" {
			return true
		}
		if strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && strings.ContainsAny(v, "si") {
			return true
		}
	}
	return false
}

// commandOption finds the command-string option of su, runuser, script,
// flock and sudo/doas (-c CMD, --command=CMD).
func commandOption(prog string, args []arg) (arg, bool) {
	for i, a := range args {
		if !a.lit {
			continue
		}
		v := a.val
		switch {
		case prog == "sudo" || prog == "doas":
			// sudo has no -c; sudo sh -c is handled through the shell.
			return arg{}, false
		case v == "--command" || v == "--session-command":
			if i+1 < len(args) {
				return args[i+1], true
			}
			return arg{}, false
		case strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && strings.IndexByte(v, 'c') > 0:
			// -c CMD, also in clusters: script -qc CMD, su -lc CMD.
			if rest := v[strings.IndexByte(v, 'c')+1:]; rest != "" {
				return withVal(a, rest), true
			}
			if i+1 < len(args) {
				return args[i+1], true
			}
			return arg{}, false
		case strings.HasPrefix(v, "--command=") || strings.HasPrefix(v, "--session-command="):
			_, val, _ := strings.Cut(v, "=")
			b := a
			b.val = val
			return b, true
		case v == "--":
			return arg{}, false
		}
	}
	return arg{}, false
}

// envSplitString handles env -S 'cmd args' / --split-string, whose value
// env splits into a command line. It reports whether it applied.
func (c *checker) envSplitString(args []arg, in stdin, depth int) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.lit {
			return false
		}
		v := a.val
		var val arg
		switch {
		case v == "-u" || v == "-C" || v == "-P" || v == "--unset" || v == "--chdir":
			i++
			continue
		case v == "-S" || v == "--split-string":
			if i+1 >= len(args) {
				return false
			}
			val = args[i+1]
			i++
		case strings.HasPrefix(v, "-S"):
			val = a
			val.val = v[2:]
		case strings.HasPrefix(v, "--split-string="):
			val = a
			val.val = strings.TrimPrefix(v, "--split-string=")
		case strings.HasPrefix(v, "-") || isAssignment(v):
			continue
		default:
			return false
		}
		if !val.lit {
			c.dynamicCode("env -S", val)
			return true
		}
		text := val.val
		for _, rest := range args[i+1:] {
			if !rest.lit {
				c.block(CategoryEvalInjection, "obfuscated command: env -S arguments are only known at run time")
				return true
			}
			q, err := syntax.Quote(rest.val, syntax.LangBash)
			if err != nil {
				c.block(CategoryUnparseable, "env -S arguments cannot be analysed")
				return true
			}
			text += " " + q
		}
		c.script(text, depth+1, in)
		return true
	}
	return false
}

// shell checks sh/bash/…: -c scripts are parsed and checked recursively; a
// shell without a script file reads its program from stdin.
func (c *checker) shell(prog string, args []arg, in stdin, depth int) {
	i := 0
	cFlag, sFlag := false, false
scan:
	for i < len(args) {
		a := args[i]
		if !a.lit {
			break
		}
		v := a.val
		switch {
		case v == "--" || v == "-":
			i++
			break scan
		case strings.HasPrefix(v, "--"):
			i++
			if (v == "--rcfile" || v == "--init-file") && i < len(args) {
				c.scriptFile(prog, args[i], in, depth)
				i++
			}
		case (strings.HasPrefix(v, "-") || strings.HasPrefix(v, "+")) && len(v) > 1:
			i++
			for _, ch := range v[1:] {
				switch ch {
				case 'c':
					cFlag = true
				case 's':
					sFlag = true
				case 'o', 'O':
					i++
				}
			}
		default:
			break scan
		}
	}
	rest := args[min(i, len(args)):]
	if cFlag {
		if len(rest) == 0 {
			return
		}
		if !rest[0].lit || rest[0].proc != nil {
			c.dynamicCode(prog, rest[0])
			return
		}
		c.script(rest[0].val, depth+1, in)
		return
	}
	if sFlag || len(rest) == 0 {
		c.stdinCode(prog, in, depth)
		return
	}
	c.scriptFile(prog, rest[0], in, depth)
}

// scriptFile handles a program read from a file operand: a process
// substitution or /dev/stdin is code the guard cannot see; a real file is
// left to the approvers.
func (c *checker) scriptFile(prog string, file arg, in stdin, depth int) {
	switch {
	case file.proc != nil:
		c.procCode(prog, file.proc)
	case file.lit && (stdinPaths[file.val] || file.val == "-"):
		c.stdinCode(prog, in, depth)
	case fdPath(file.val):
		c.block(CategoryEvalInjection, prog+" runs code from an open file descriptor the guard cannot see")
	}
}

// sg runs its command string through /bin/sh -c: `sg GROUP [-c] CMD`.
func (c *checker) sg(args []arg, in stdin, depth int) {
	if len(args) > 0 && args[0].lit && args[0].val == "-" {
		args = args[1:]
	}
	if len(args) < 2 {
		return
	}
	rest := args[1:]
	if rest[0].lit && rest[0].val == "-c" {
		rest = rest[1:]
	}
	text, ok := joinArgs(rest)
	if !ok {
		c.dynamicArgs("sg", rest)
		return
	}
	c.script(text, depth+1, in)
}

// trap checks the command string a trap runs.
func (c *checker) trap(args []arg, in stdin, depth int) {
	if len(args) > 0 && args[0].lit && args[0].val == "--" {
		args = args[1:]
	}
	if len(args) < 2 || (args[0].lit && strings.HasPrefix(args[0].val, "-")) {
		return
	}
	if !args[0].lit {
		c.dynamicCode("trap", args[0])
		return
	}
	c.script(args[0].val, depth+1, in)
}

// watch runs its arguments, joined, through sh -c (unless -x).
func (c *checker) watch(args []arg, in stdin, depth int) {
	i, direct := 0, false
	for i < len(args) && args[i].lit && strings.HasPrefix(args[i].val, "-") {
		v := args[i].val
		i++
		switch {
		case v == "--":
			goto run
		case v == "-x" || v == "--exec":
			direct = true
		case v == "-n" || v == "--interval" || v == "-q" || v == "--equexit":
			i++
		}
	}
run:
	rest := args[min(i, len(args)):]
	if len(rest) == 0 {
		return
	}
	if direct {
		c.simple(rest, in, depth)
		return
	}
	text, ok := joinArgs(rest)
	if !ok {
		c.dynamicArgs("watch", rest)
		return
	}
	c.script(text, depth+1, in)
}

// leavesWorkspace reports whether `cd dir` may leave the workspace. HOME is
// the workspace, so ~ and ~/sub stay inside.
func leavesWorkspace(dir arg) bool {
	if dir.lit && dir.tilde && (dir.val == "~" || strings.HasPrefix(dir.val, "~/")) {
		c := cleanPath(dir.val)
		return c != "~" && !strings.HasPrefix(c, "~/")
	}
	return dir.val == "-" || outsideTarget(dir) != "" || systemTarget(dir)
}
