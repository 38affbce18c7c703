package shellguard

import "strings"

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
	check := func(val arg) {
		if c.verdict != nil {
			return
		}
		if !val.lit {
			c.dynamicCode(prog, val)
			return
		}
		c.script(val.val, depth+1, in)
	}
	names := commandOptionNames[prog]
	for i, a := range args {
		if !a.lit {
			continue
		}
		v := a.val
		next := func() (arg, bool) {
			if i+1 < len(args) {
				return args[i+1], true
			}
			return arg{}, false
		}
		for _, opt := range names {
			var val arg
			var ok bool
			switch {
			case v == opt:
				val, ok = next()
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
			check(val)
		}
		switch {
		case prog == "ssh" && (v == "-o" || strings.HasPrefix(v, "-o")):
			opt := strings.TrimPrefix(v, "-o")
			if opt == "" {
				n, ok := next()
				if !ok {
					continue
				}
				if !n.lit {
					c.dynamicCode(prog, n)
					continue
				}
				opt = n.val
			}
			key, val := opt, ""
			if k := strings.IndexAny(opt, "= "); k >= 0 {
				key, val = opt[:k], opt[k+1:]
			}
			switch strings.ToLower(strings.TrimSpace(key)) {
			case "proxycommand", "localcommand", "knownhostscommand":
				check(literalArg(strings.TrimSpace(val)))
			}
		case prog == "git" && (v == "run" || v == "foreach") && gitRunsRest(args[:i], v):
			// git bisect run CMD…, git submodule foreach [--recursive] CMD…
			rest := args[i+1:]
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
				check(literalArg(strings.Join(parts, " ")))
			}
			return
		case prog == "git" && v == "-c":
			n, ok := next()
			if !ok {
				continue
			}
			if !n.lit {
				c.dynamicCode(prog, n)
				continue
			}
			key, val, _ := strings.Cut(n.val, "=")
			key = strings.ToLower(key)
			for _, suffix := range gitCommandKeys {
				bang := strings.HasPrefix(suffix, "!")
				suffix = strings.TrimPrefix(suffix, "!")
				if !strings.HasSuffix(key, suffix) && !strings.HasPrefix(key, suffix+".") {
					continue
				}
				if bang {
					if rest, isCmd := strings.CutPrefix(val, "!"); isCmd {
						check(literalArg(rest))
					}
					continue
				}
				check(literalArg(val))
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
