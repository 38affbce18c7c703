package shellguard

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// commandOptionNames are options whose value a program runs as a shell
// command.
var commandOptionNames = map[string][]string{
	"tar":   {"--to-command", "--use-compress-program", "-I", "--info-script", "-F", "--new-volume-script", "--checkpoint-action"},
	"rsync": {"-e", "--rsh", "--rsync-path"},
	"zip":   {"-TT", "--unzip-command"},
	"git":   {"--upload-pack", "-u", "--receive-pack", "--exec", "-x", "--extcmd"},
}

// gitCommandKeys are git config keys (suffixes) whose value runs as a
// command; "!" marks keys that only run values starting with "!".
var gitCommandKeys = []string{"sshcommand", "pager", "editor", "fsmonitor", "external", "textconv", "clean",
	"smudge", "process", "driver", "packobjectshook", "gitproxy", "program", "askpass", "!helper", "!alias"}

// commandOptions checks option values that a program runs as a shell
// command: tar --to-command, rsync -e, ssh -o ProxyCommand=…, git -c
// core.sshCommand=…, git -c alias.x='!…'.
func (c *checker) commandOptions(prog string, args []arg, in stdin, depth int) {
	names := commandOptionNames[prog]
	for i, a := range args {
		if !a.lit {
			continue
		}
		c.namedCommandOptions(prog, names, args, i, in, depth)
		if c.commandOption(prog, args, i, in, depth) {
			return
		}
	}
}

// argAfter returns the argument after args[i], if there is one.
func argAfter(args []arg, i int) (arg, bool) {
	if i+1 < len(args) {
		return args[i+1], true
	}
	return arg{}, false
}

// checkCommand checks val, an option's value that prog runs as a shell
// command, unless a verdict is already in.
func (c *checker) checkCommand(prog string, val arg, in stdin, depth int) {
	if c.verdict != nil {
		return
	}
	if !val.lit {
		c.dynamicCode(prog, val)
		return
	}
	c.script(val.val, depth+1, in)
}

// namedCommandOptions checks args[i] against the options of prog whose
// value is a command (commandOptionNames): "--opt VAL", "--opt=VAL" or
// "-oVAL".
func (c *checker) namedCommandOptions(prog string, names []string, args []arg, i int, in stdin, depth int) {
	a := args[i]
	v := a.val
	for _, opt := range names {
		var val arg
		var ok bool
		switch {
		case v == opt:
			val, ok = argAfter(args, i)
		case strings.HasPrefix(opt, "--") && strings.HasPrefix(v, opt+"="):
			val, ok = withVal(a, strings.TrimPrefix(v, opt+"=")), true
		case len(opt) == 2 && strings.HasPrefix(v, opt) && len(v) > 2 && !strings.HasPrefix(v, "--"):
			val, ok = withVal(a, v[2:]), true
		}
		if !ok {
			continue
		}
		if opt == "--checkpoint-action" {
			rest, isExec := strings.CutPrefix(val.val, "exec=")
			if !isExec {
				continue
			}
			val = withVal(val, rest)
		}
		c.checkCommand(prog, val, in, depth)
	}
}

// commandOption checks args[i] for the ssh and git forms that run a
// command: a config file, an -o option, an ext:: address, a git setting,
// git bisect run and git submodule foreach. It reports true when the rest
// of args is the command, so nothing after it is an option.
func (c *checker) commandOption(prog string, args []arg, i int, in stdin, depth int) (rest bool) {
	a := args[i]
	v := a.val
	if prog == "git" && strings.HasPrefix(v, "ext::") {
		// git's ext transport runs the rest of the URL as a command.
		c.warn("git runs the command in an ext:: repository address")
		c.checkCommand(prog, literalArg(gitExtCommand(strings.TrimPrefix(v, "ext::"))), in, depth)
		return false
	}
	switch {
	case sshPrograms[prog] && (v == "-F" || strings.HasPrefix(v, "-F")):
		file := withVal(a, strings.TrimPrefix(v, "-F"))
		if file.val == "" {
			n, ok := argAfter(args, i)
			if !ok {
				return false
			}
			file = n
		}
		c.sshConfigFile(prog, file, in, depth)
	case prog == "git" && (v == "--config-env" || strings.HasPrefix(v, "--config-env=")):
		c.gitConfigEnv(args, i)
	case prog == "git" && v == "-c" && strings.HasPrefix(strings.ToLower(nextVal(args, i)), "protocol.ext.allow"):
		c.warn("git may run commands given as ext:: repository addresses")
	case sshPrograms[prog] && (v == "-o" || strings.HasPrefix(v, "-o")):
		c.sshOption(prog, args, i, in, depth)
	case prog == "git" && (v == "run" || v == "foreach") && gitRunsRest(args[:i], v):
		c.gitRunCommand(prog, args[i+1:], in, depth)
		return true
	case prog == "git" && v == "-c":
		c.gitConfigValue(prog, args, i, in, depth)
	}
	return false
}

// gitConfigEnv blocks git --config-env for a setting that runs a command,
// or for one it cannot read.
func (c *checker) gitConfigEnv(args []arg, i int) {
	a := args[i]
	spec, ok := withVal(a, strings.TrimPrefix(a.val, "--config-env=")), true
	if a.val == "--config-env" {
		spec, ok = argAfter(args, i)
	}
	key, _, _ := strings.Cut(spec.val, "=")
	if ok && (!spec.lit || gitCommandKey(strings.ToLower(key)) != "") {
		// The value comes from an environment variable: a command the
		// guard cannot see.
		c.block(CategoryEvalInjection, "git takes a command-running setting from an environment variable")
	}
}

// sshOption checks ssh's -o KEY=VALUE (or -oKEY VALUE) for the options
// whose value is a local command.
func (c *checker) sshOption(prog string, args []arg, i int, in stdin, depth int) {
	opt := strings.TrimPrefix(args[i].val, "-o")
	if opt == "" {
		n, ok := argAfter(args, i)
		if !ok {
			return
		}
		if !n.lit {
			c.dynamicCode(prog, n)
			return
		}
		opt = n.val
	}
	key, val := opt, ""
	if k := strings.IndexAny(opt, "= "); k >= 0 {
		key, val = opt[:k], opt[k+1:]
	}
	switch strings.ToLower(strings.TrimSpace(key)) {
	case "proxycommand", "localcommand", "knownhostscommand":
		c.checkCommand(prog, literalArg(strings.TrimSpace(val)), in, depth)
	}
}

// gitRunCommand checks the command of git bisect run CMD… or git submodule
// foreach [--recursive] CMD…, rest being the arguments after run or
// foreach.
func (c *checker) gitRunCommand(prog string, rest []arg, in stdin, depth int) {
	for len(rest) > 0 && rest[0].lit && strings.HasPrefix(rest[0].val, "--") {
		rest = rest[1:]
	}
	var parts []string
	for _, r := range rest {
		if !r.lit {
			c.dynamicCode(prog, r)
			return
		}
		parts = append(parts, r.val)
	}
	if len(parts) > 0 {
		c.checkCommand(prog, literalArg(strings.Join(parts, " ")), in, depth)
	}
}

// gitConfigValue checks git -c KEY=VALUE for a setting that runs its value
// (or, for aliases, a value starting with "!").
func (c *checker) gitConfigValue(prog string, args []arg, i int, in stdin, depth int) {
	n, ok := argAfter(args, i)
	if !ok {
		return
	}
	if !n.lit {
		c.dynamicCode(prog, n)
		return
	}
	key, val, _ := strings.Cut(n.val, "=")
	switch gitCommandKey(strings.ToLower(key)) {
	case "":
	case "!":
		if rest, isCmd := strings.CutPrefix(val, "!"); isCmd {
			c.checkCommand(prog, literalArg(rest), in, depth)
		}
	default:
		c.checkCommand(prog, literalArg(val), in, depth)
	}
}

// gitCommandKey reports whether a git config key holds a command: "cmd"
// when its value runs, "!" when only a value starting with "!" runs, ""
// otherwise.
func gitCommandKey(key string) string {
	for _, suffix := range gitCommandKeys {
		bang := strings.HasPrefix(suffix, "!")
		suffix = strings.TrimPrefix(suffix, "!")
		if !strings.HasSuffix(key, suffix) && !strings.HasPrefix(key, suffix+".") {
			continue
		}
		if bang {
			return "!"
		}
		return "cmd"
	}
	return ""
}

// nextVal returns the value of the argument after i, or "".
func nextVal(args []arg, i int) string {
	if i+1 < len(args) {
		return args[i+1].val
	}
	return ""
}

// gitExtCommand turns an ext:: address into the shell command it runs: git
// splits it into arguments at spaces, "% " being a space inside an
// argument and "%%" a percent sign; %s, %S and %G are git's placeholders.
func gitExtCommand(s string) string {
	var words []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			q, err := syntax.Quote(b.String(), syntax.LangBash)
			if err != nil {
				q = `"` + unknownExpansion + `"`
			}
			words = append(words, q)
			b.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == ' ':
			flush()
		case s[i] != '%' || i+1 >= len(s):
			b.WriteByte(s[i])
		default:
			i++
			switch s[i] {
			case ' ', '%':
				b.WriteByte(s[i])
			case 's', 'S', 'G':
				b.WriteString("git-upload-pack")
			default:
				b.WriteByte('%')
				b.WriteByte(s[i])
			}
		}
	}
	flush()
	return strings.Join(words, " ")
}

// sshPrograms are the OpenSSH clients that take -o options and -F files.
var sshPrograms = setOf("ssh", "scp", "sftp")

// sshConfigFile checks `ssh -F FILE`: a configuration read from stdin or a
// process is checked or blocked like code (ProxyCommand, LocalCommand and
// Match exec run commands); another file is a warning.
func (c *checker) sshConfigFile(prog string, file arg, in stdin, depth int) {
	switch {
	case file.proc != nil:
		c.procCode(prog, file.proc)
	case file.lit && (file.val == "-" || stdinPaths[file.val]):
		c.stdinProgram(prog, "sshconfig", in, depth)
	case fdPath(file.val):
		c.block(CategoryEvalInjection, prog+" reads a configuration (which can run commands) from an open file descriptor")
	case file.val != "/dev/null":
		c.warn(prog + " uses another configuration file, which can run commands (ProxyCommand)")
	}
}

// sshConfig checks the command-running keywords of an ssh configuration.
func (c *checker) sshConfig(text string, depth int) {
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		k := strings.IndexAny(line, " \t=")
		if k < 0 || c.verdict != nil {
			continue
		}
		key, val := strings.ToLower(line[:k]), strings.TrimLeft(line[k:], " \t=")
		switch key {
		case "proxycommand", "localcommand", "knownhostscommand", "remotecommand":
			c.script(val, depth+1, stdin{kind: stdinNull})
		case "match":
			if i := strings.Index(strings.ToLower(val), "exec "); i >= 0 {
				c.script(strings.Trim(strings.TrimSpace(val[i+5:]), `"`), depth+1, stdin{kind: stdinNull})
			}
		}
	}
}

// gitRunsRest reports whether word (run or foreach) follows the git
// subcommand that runs the rest of the line as a command (bisect run,
// submodule foreach).
func gitRunsRest(before []arg, word string) bool {
	want := map[string]string{"run": "bisect", "foreach": "submodule"}[word]
	for _, b := range before {
		if b.lit && b.val == want {
			return true
		}
	}
	return false
}
