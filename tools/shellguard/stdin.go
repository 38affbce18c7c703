package shellguard

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// stdinKind says where a command's standard input comes from, which matters
// when the command is an interpreter reading its program from stdin.
type stdinKind int

const (
	stdinNull    stdinKind = iota // /dev/null: exec gives commands no input
	stdinFile                     // a file on disk: like running a script file
	stdinPipe                     // the previous pipeline stage
	stdinCmd                      // the output of commands: < <(cmd)
	stdinText                     // a heredoc or here-string
	stdinUnknown                  // whatever a caller feeds (function bodies, >(…))
)

// stdin describes a command's standard input.
type stdin struct {
	kind     stdinKind
	pipeline []*syntax.Stmt // every stage of the enclosing pipeline, if any
	pos      int            // index of the reading stage in pipeline
	cmds     []*syntax.Stmt // stdinCmd: the producing commands
	text     string         // stdinText: the body
	known    bool           // stdinText: the body has no expansions
	word     *syntax.Word   // stdinText: the body as parsed
}

// stdinPaths name the standard input as a file.
var stdinPaths = map[string]bool{"/dev/stdin": true, "/dev/fd/0": true, "/proc/self/fd/0": true}

// redirects checks a statement's redirections and returns the statement's
// standard input after them.
func (c *checker) redirects(rs []*syntax.Redirect, in stdin, depth int) stdin {
	for _, r := range rs {
		if c.verdict != nil {
			return in
		}
		if r.Word != nil {
			c.nested(r.Word, in, depth)
		}
		if r.Hdoc != nil {
			c.nested(r.Hdoc, in, depth)
		}
		fd := ""
		if r.N != nil {
			fd = r.N.Value
		}
		var target arg
		if r.Word != nil {
			target = evalParts(r.Word.Parts)
			target.word = r.Word
		}
		if r.Op != syntax.Hdoc && r.Op != syntax.DashHdoc && r.Op != syntax.WordHdoc && netDevice(target.val) {
			c.block(CategoryReverseShell, "redirection to a network socket")
			return in
		}
		switch r.Op {
		case syntax.RdrIn:
			c.readPath(target)
			if fd == "" || fd == "0" {
				switch {
				case len(r.Word.Parts) == 1 && isProcSubst(r.Word.Parts[0]):
					in = in.with(stdin{kind: stdinCmd, cmds: r.Word.Parts[0].(*syntax.ProcSubst).Stmts})
				case target.lit && stdinPaths[target.val]:
				default:
					in = in.with(stdin{kind: stdinFile})
				}
			}
		case syntax.RdrInOut:
			c.readPath(target)
			c.writePath(target, "redirected output")
			if fd == "" || fd == "0" {
				in = in.with(stdin{kind: stdinFile})
			}
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			if fd == "" || fd == "0" {
				text, known := redirText(r)
				in = in.with(stdin{kind: stdinText, text: text, known: known, word: redirBody(r)})
			}
		case syntax.DplIn:
			if (fd == "" || fd == "0") && !(target.lit && (target.val == "0" || target.val == "-")) {
				in = in.with(stdin{kind: stdinUnknown})
			}
		case syntax.DplOut:
			if target.lit && (target.val == "-" || isDigits(target.val)) {
				continue
			}
			c.writePath(target, "redirected output")
		default: // >, >>, >|, &>, &>>
			c.writePath(target, "redirected output")
		}
	}
	return in
}

// with returns next, keeping the pipeline the statement belongs to.
func (s stdin) with(next stdin) stdin {
	next.pipeline, next.pos = s.pipeline, s.pos
	return next
}

func isProcSubst(p syntax.WordPart) bool {
	_, ok := p.(*syntax.ProcSubst)
	return ok
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// redirBody returns the word holding a heredoc or here-string body.
func redirBody(r *syntax.Redirect) *syntax.Word {
	if r.Op == syntax.WordHdoc {
		return r.Word
	}
	return r.Hdoc
}

// redirText returns the text a heredoc or here-string feeds, and whether it
// is fully known before running.
func redirText(r *syntax.Redirect) (string, bool) {
	if r.Op == syntax.WordHdoc {
		return wordText(r.Word)
	}
	if r.Hdoc == nil {
		return "", true
	}
	quoted := false
	for _, p := range r.Word.Parts {
		if l, ok := p.(*syntax.Lit); !ok || strings.Contains(l.Value, `\`) {
			quoted = true
		}
	}
	var b strings.Builder
	known := true
	for _, p := range r.Hdoc.Parts {
		l, ok := p.(*syntax.Lit)
		switch {
		case ok && quoted:
			b.WriteString(l.Value)
		case ok:
			unquoteDblLit(&b, l.Value)
		default:
			known = false
			b.WriteString(unknownPart)
		}
	}
	return b.String(), known
}

// stdinCode handles a shell that reads its program from stdin.
func (c *checker) stdinCode(prog string, in stdin, depth int) {
	c.stdinProgram(prog, "", in, depth)
}

// stdinProgram handles an interpreter that reads its program from stdin;
// family is "" for shells, else the interpreter family (python, perl…).
func (c *checker) stdinProgram(prog, family string, in stdin, depth int) {
	known := func(text string) {
		switch family {
		case "":
			c.script(text, depth+1, stdin{kind: stdinNull})
			return
		case "make":
			c.makefile(text, depth)
			return
		case "crontab":
			c.crontabText(text, depth)
			return
		case "sshconfig":
			c.sshConfig(text, depth)
			return
		}
		code := []arg{literalArg(text)}
		c.inlineCode(prog, family, code, code, depth)
	}
	// sh < fifo | nc host port: a shell fed from a file (a named pipe) in a
	// pipeline that talks to the network.
	if (in.kind == stdinFile || in.kind == stdinUnknown) && len(in.pipeline) > 1 {
		others := append(append([]*syntax.Stmt{}, in.pipeline[:in.pos]...), in.pipeline[in.pos+1:]...)
		if c.anyNetwork(others) {
			c.block(CategoryReverseShell, prog+" reads commands in a pipeline that talks to the network")
			return
		}
	}
	switch in.kind {
	case stdinNull, stdinFile:
		return
	case stdinPipe:
		up, down := in.pipeline[:in.pos], in.pipeline[in.pos+1:]
		switch {
		case c.anyNetwork(up):
			c.block(CategoryRemoteCode, "downloaded code is piped into "+prog)
		case c.anyNetwork(down):
			c.block(CategoryReverseShell, prog+" reads commands from a pipe that talks to the network")
		default:
			text, ok := echoText(in.pipeline[in.pos-1])
			if !ok {
				c.block(CategoryEvalInjection, "code piped into "+prog+" is produced at run time")
				return
			}
			known(text)
		}
	case stdinCmd:
		if c.anyNetwork(in.cmds) {
			c.block(CategoryRemoteCode, "downloaded code is fed into "+prog)
			return
		}
		c.block(CategoryEvalInjection, "code fed into "+prog+" is produced at run time")
	case stdinText:
		if !in.known {
			if in.word != nil && c.hasNetwork(in.word) {
				c.block(CategoryRemoteCode, "downloaded code is fed into "+prog)
				return
			}
			c.block(CategoryEvalInjection, "code fed into "+prog+" is expanded at run time")
			return
		}
		known(in.text)
	default:
		c.block(CategoryEvalInjection, prog+" reads code from an input the guard cannot see")
	}
}

// echoText returns what a pipeline stage prints when it is a plain echo or
// printf of known text, so `echo 'ls' | sh` can be checked like `ls`.
func echoText(st *syntax.Stmt) (string, bool) {
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 || len(call.Assigns) > 0 || len(st.Redirs) > 0 {
		return "", false
	}
	argv := evalWords(call.Args)
	for _, a := range argv {
		if !a.lit {
			return "", false
		}
	}
	switch programName(argv[0].val) {
	case "echo":
		rest := argv[1:]
		for len(rest) > 0 && (rest[0].val == "-n" || rest[0].val == "-e" || rest[0].val == "-E") {
			rest = rest[1:]
		}
		text, _ := joinArgs(rest)
		// dash's echo always interprets backslash escapes.
		if strings.Contains(text, `\`) {
			return "", false
		}
		return text, true
	case "printf":
		if len(argv) < 2 || strings.ContainsAny(argv[1].val, `%\`) {
			return "", false
		}
		return argv[1].val, true
	}
	return "", false
}

// procCode handles a program read from a process substitution: sh <(cmd).
func (c *checker) procCode(prog string, ps *syntax.ProcSubst) {
	if c.anyNetwork(ps.Stmts) {
		c.block(CategoryRemoteCode, "downloaded code is run by "+prog)
		return
	}
	c.block(CategoryEvalInjection, "code run by "+prog+" is produced at run time")
}

// dynamicCode handles program text that is only known at run time:
// sh -c "$X", eval "$(…)", python3 -c "$CODE".
func (c *checker) dynamicCode(prog string, a arg) {
	if a.word != nil && c.hasNetwork(a.word) {
		c.block(CategoryRemoteCode, "downloaded code is run by "+prog)
		return
	}
	c.block(CategoryEvalInjection, "code run by "+prog+" is only known at run time")
}

// anyNetwork reports whether any of the statements runs a network client.
func (c *checker) anyNetwork(stmts []*syntax.Stmt) bool {
	for _, st := range stmts {
		if c.hasNetwork(st) {
			return true
		}
	}
	return false
}

// hasNetwork reports whether node runs a network client anywhere inside,
// looking through wrappers (sudo curl, env wget…).
func (c *checker) hasNetwork(node syntax.Node) bool {
	if isNilNode(node) {
		return false
	}
	found := false
	syntax.Walk(node, func(n syntax.Node) bool {
		if found {
			return false
		}
		call, ok := n.(*syntax.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		if c.stop() {
			found = true // over budget: assume the worst; stop() blocked already
			return false
		}
		for _, name := range chain(evalWords(call.Args)) {
			if networkTools[name] {
				found = true
			}
		}
		return true
	})
	return found
}

// networkTools are programs that fetch data from, or talk to, other hosts.
var networkTools = setOf("curl", "wget", "fetch", "aria2c", "http", "https", "xh", "httpie", "lwp-request",
	"lwp-download", "GET", "POST", "HEAD", "nc", "ncat", "netcat", "socat", "telnet", "openssl", "ssh",
	"dig", "nslookup", "host", "drill", "ftp", "tftp", "lftp", "smbclient", "gnutls-cli")

// setOf builds a set from names.
func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}
