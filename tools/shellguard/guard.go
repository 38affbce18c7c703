// Package shellguard decides whether a shell command is too dangerous to
// even ask a human about. It parses the command with a real shell parser
// (bash and dash readings), looks through wrappers and tricks, and gives the
// normalized form that "Always allow" stores.
package shellguard

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Verdict is the shell guard's decision about one command. A blocked command
// never runs and is never shown to an approver; anything else still needs
// approval (unless always-allowed) before it runs.
//
// Warnings name dangers of a command that is not blocked because it has
// honest uses (installing a crontab, LD_PRELOAD, a makefile read from
// stdin): callers show them to the approvers and never run such a command
// unasked or through "Always allow".
type Verdict struct {
	Blocked  bool
	Category string // one of the Category constants when Blocked
	Reason   string // short explanation for logs; never quotes the command's words
	// Warnings are short, human-readable dangers (empty when Blocked).
	Warnings []string
}

// Dangerous reports whether the command is not blocked but has warnings.
func (v Verdict) Dangerous() bool { return !v.Blocked && len(v.Warnings) > 0 }

// The categories a blocked command falls into.
const (
	CategoryDestructive   = "destructive file operation"
	CategoryDisk          = "disk destruction"
	CategorySystemControl = "system control"
	CategoryForkBomb      = "fork bomb"
	CategoryRemoteCode    = "remote code execution"
	CategoryReverseShell  = "reverse shell"
	CategoryEvalInjection = "eval injection"
	CategoryPrivilege     = "privilege escalation"
	CategoryCredentials   = "credential access"
	CategoryPersistence   = "persistence"
	CategoryUnparseable   = "unparseable"
)

const (
	// maxCommandLen is the longest command the guard analyses.
	maxCommandLen = 64 << 10
	// maxDepth bounds nested scripts (sh -c 'eval "sh -c …"').
	maxDepth = 8
	// maxWork bounds the statements analysed for one command, so hostile
	// input cannot make the guard slow.
	maxWork = 100000
)

// CheckCommand parses cmd as a shell program (bash syntax, and also as POSIX
// sh reads it) and reports whether it must be blocked outright. It walks
// every simple command the program can run, looking through wrappers (env,
// sudo, xargs, find -exec, sh -c '…', eval …) and resolving program names
// (/bin/rm, r\m, 'rm'). A program name only known at run time is blocked.
//
// err is non-nil only when cmd cannot be parsed; the verdict is then Blocked
// with CategoryUnparseable, so callers may ignore err.
func CheckCommand(cmd string) (Verdict, error) {
	if reason := unusableText(cmd); reason != "" {
		return Verdict{Blocked: true, Category: CategoryUnparseable, Reason: reason}, errors.New(reason)
	}
	c := &checker{}
	f, err := parseShell(cmd, syntax.LangBash)
	if err != nil {
		return Verdict{Blocked: true, Category: CategoryUnparseable, Reason: "the command is not valid shell syntax"},
			fmt.Errorf("parse command: %w", err)
	}
	if len(f.Stmts) == 0 {
		return Verdict{Blocked: true, Category: CategoryUnparseable, Reason: "the command runs nothing"},
			errors.New("the command runs nothing")
	}
	c.script(cmd, 0, stdin{kind: stdinNull})
	if c.verdict != nil {
		return *c.verdict, nil
	}
	warnings := c.warnings
	// Exec stores and matches the normal form; a command without a faithful
	// one cannot be reasoned about.
	if _, err := NormalizeCommand(cmd); err != nil {
		return Verdict{Blocked: true, Category: CategoryUnparseable, Reason: "the command has no faithful normal form"},
			fmt.Errorf("normalize command: %w", err)
	}
	return Verdict{Warnings: warnings}, nil
}

// unusableText explains why text cannot be analysed at all, or returns "".
func unusableText(s string) string {
	switch {
	case strings.TrimSpace(s) == "":
		return "the command is empty"
	case len(s) > maxCommandLen:
		return "the command is too long to analyse"
	case strings.IndexByte(s, 0) >= 0:
		return "the command contains a NUL byte"
	}
	return ""
}

// parseShell parses src in the given dialect.
func parseShell(src string, lang syntax.LangVariant) (*syntax.File, error) {
	return syntax.NewParser(syntax.Variant(lang)).Parse(strings.NewReader(src), "")
}

// checker walks a parsed program and records the first reason to block it.
type checker struct {
	verdict *Verdict
	work    int
	// cwdOutside is set once the program changes to a directory outside
	// the workspace (cd /, cd ..), after which relative paths are too.
	cwdOutside bool
	// warnings are the dangers found so far, without repeats.
	warnings []string
	// funcs are the shell functions the program defines; calling names
	// those being checked with their call's arguments (no recursion).
	funcs   map[string]funcDef
	calling map[string]bool
}

// warn records a danger that does not block the command but that the
// approvers must see.
func (c *checker) warn(reason string) {
	if !slices.Contains(c.warnings, reason) && len(c.warnings) < 8 {
		c.warnings = append(c.warnings, reason)
	}
}

// block records a verdict; the first one wins.
func (c *checker) block(category, reason string) {
	if c.verdict == nil {
		c.verdict = &Verdict{Blocked: true, Category: category, Reason: reason}
	}
}

// stop reports whether analysis can end: something was found or the work
// budget is spent (which blocks: a program too big to analyse is not run).
func (c *checker) stop() bool {
	if c.verdict != nil {
		return true
	}
	c.work++
	if c.work > maxWork {
		c.block(CategoryUnparseable, "the command is too large to analyse")
		return true
	}
	return false
}

// script checks a program text that a shell will run: the top-level command,
// an sh -c argument, an eval string, a heredoc fed to a shell.
func (c *checker) script(src string, depth int, in stdin) {
	if c.stop() {
		return
	}
	if depth > maxDepth {
		c.block(CategoryEvalInjection, "commands are nested too deeply to analyse")
		return
	}
	if reason := unusableText(src); reason != "" {
		if strings.TrimSpace(src) == "" {
			return // an empty nested script runs nothing
		}
		c.block(CategoryUnparseable, "a nested script: "+reason)
		return
	}
	// Parsing costs work in proportion to the text.
	c.work += len(src) / 64
	f, err := parseShell(src, syntax.LangBash)
	if err != nil {
		c.block(CategoryUnparseable, "a nested script is not valid shell syntax")
		return
	}
	cwdOutside := c.cwdOutside
	c.defineFunctions(f, src)
	c.forkBombs(f)
	c.stmts(f.Stmts, in, depth)
	// /bin/sh may be dash, which reads some text differently from bash
	// (`a &>f b` runs b; `((x))` is two subshells). Check that reading too.
	if pf := posixView(src, f); pf != nil {
		after := c.cwdOutside
		c.cwdOutside = cwdOutside
		c.forkBombs(pf)
		c.stmts(pf.Stmts, in, depth)
		c.cwdOutside = c.cwdOutside || after
	}
}

// posixView parses src the way a POSIX shell such as dash reads it. Where
// bash-only syntax makes that fail, it parses the lines before the failure,
// which dash would already have run. It returns nil when there is nothing
// more to check.
func posixView(src string, bash *syntax.File) *syntax.File {
	posixSrc := splitAmpRedirects(src, bash)
	f, err := parseShell(posixSrc, syntax.LangPOSIX)
	if err == nil {
		return f
	}
	line := errLine(err)
	if line <= 1 {
		return nil
	}
	lines := strings.SplitAfter(posixSrc, "\n")
	if int(line-1) > len(lines) {
		return nil
	}
	f, err = parseShell(strings.Join(lines[:line-1], ""), syntax.LangPOSIX)
	if err != nil {
		return nil
	}
	return f
}

// splitAmpRedirects rewrites bash's `&>` and `&>>` as `& >`, which is how a
// POSIX shell reads them: run the command so far in the background, then
// start a new command.
func splitAmpRedirects(src string, f *syntax.File) string {
	var offs []int
	syntax.Walk(f, func(n syntax.Node) bool {
		if r, ok := n.(*syntax.Redirect); ok && (r.Op == syntax.RdrAll || r.Op == syntax.AppAll) {
			off := int(r.OpPos.Offset())
			if off < len(src) && src[off] == '&' {
				offs = append(offs, off)
			}
		}
		return true
	})
	if len(offs) == 0 {
		return src
	}
	sort.Sort(sort.Reverse(sort.IntSlice(offs)))
	for _, off := range offs {
		src = src[:off+1] + " " + src[off+1:]
	}
	return src
}

// errLine returns the line of a parse error, or 0.
func errLine(err error) uint {
	var pe syntax.ParseError
	if errors.As(err, &pe) {
		return pe.Pos.Line()
	}
	var le syntax.LangError
	if errors.As(err, &le) {
		return le.Pos.Line()
	}
	return 0
}

// stmts checks a statement list.
func (c *checker) stmts(list []*syntax.Stmt, in stdin, depth int) {
	for _, st := range list {
		c.stmt(st, in, depth)
	}
}

// stmt checks one statement: its redirections, then its command.
func (c *checker) stmt(st *syntax.Stmt, in stdin, depth int) {
	if st == nil || c.stop() {
		return
	}
	in = c.redirects(st.Redirs, in, depth)
	if st.Cmd != nil {
		c.command(st.Cmd, in, depth)
	}
}

// command checks every kind of compound and simple command.
func (c *checker) command(cmd syntax.Command, in stdin, depth int) {
	if c.stop() {
		return
	}
	switch x := cmd.(type) {
	case *syntax.CallExpr:
		for _, as := range x.Assigns {
			c.assign(as, in, depth)
		}
		for _, w := range x.Args {
			c.nested(w, in, depth)
		}
		if len(x.Args) > 0 {
			argv := evalWords(x.Args)
			c.simple(argv, in, depth)
			c.callFunction(argv, in, depth)
		}
	case *syntax.BinaryCmd:
		if x.Op == syntax.Pipe || x.Op == syntax.PipeAll {
			stages := pipeStages(x)
			for i, st := range stages {
				sin := stdin{kind: stdinPipe, pipeline: stages, pos: i}
				if i == 0 {
					sin = in
					sin.pipeline, sin.pos = stages, 0
				}
				c.stmt(st, sin, depth)
			}
			return
		}
		c.stmt(x.X, in, depth)
		c.stmt(x.Y, in, depth)
	case *syntax.Block:
		c.stmts(x.Stmts, in, depth)
	case *syntax.Subshell:
		c.stmts(x.Stmts, in, depth)
	case *syntax.IfClause:
		for ic := x; ic != nil; ic = ic.Else {
			c.stmts(ic.Cond, in, depth)
			c.stmts(ic.Then, in, depth)
		}
	case *syntax.WhileClause:
		c.stmts(x.Cond, in, depth)
		c.stmts(x.Do, in, depth)
	case *syntax.ForClause:
		c.nested(x.Loop, in, depth)
		c.stmts(x.Do, in, depth)
	case *syntax.CaseClause:
		c.nested(x.Word, in, depth)
		for _, item := range x.Items {
			for _, p := range item.Patterns {
				c.nested(p, in, depth)
			}
			c.stmts(item.Stmts, in, depth)
		}
	case *syntax.FuncDecl:
		// A function body reads whatever its callers feed it.
		c.stmt(x.Body, stdin{kind: stdinUnknown}, depth)
	case *syntax.TimeClause:
		c.stmt(x.Stmt, in, depth)
	case *syntax.CoprocClause:
		c.nested(x.Name, in, depth)
		c.stmt(x.Stmt, stdin{kind: stdinUnknown}, depth)
	case *syntax.DeclClause:
		for _, as := range x.Args {
			c.assign(as, in, depth)
		}
	case *syntax.LetClause, *syntax.TestClause:
		c.arithmeticWords(cmd)
		c.nested(cmd, in, depth)
	default: // ArithmCmd, TestDecl
		c.nested(cmd, in, depth)
	}
}

// pipeStages flattens a pipeline into its stages, left to right.
func pipeStages(b *syntax.BinaryCmd) []*syntax.Stmt {
	var out []*syntax.Stmt
	var add func(st *syntax.Stmt)
	add = func(st *syntax.Stmt) {
		if inner, ok := st.Cmd.(*syntax.BinaryCmd); ok && len(st.Redirs) == 0 && !st.Negated && !st.Background &&
			(inner.Op == syntax.Pipe || inner.Op == syntax.PipeAll) {
			add(inner.X)
			add(inner.Y)
			return
		}
		out = append(out, st)
	}
	add(b.X)
	add(b.Y)
	return out
}

// nested checks the commands hidden inside a node: command substitutions
// $(…) and `…`, and process substitutions <(…) >(…), wherever they appear
// (arguments, parameter expansions, arithmetic, test expressions).
func (c *checker) nested(node syntax.Node, in stdin, depth int) {
	if isNilNode(node) {
		return
	}
	syntax.Walk(node, func(n syntax.Node) bool {
		if c.verdict != nil {
			return false
		}
		switch x := n.(type) {
		case *syntax.CmdSubst:
			c.stmts(x.Stmts, in, depth)
			return false
		case *syntax.ProcSubst:
			sin := in
			if x.Op == syntax.CmdOut {
				// >(cmd) reads what the outer command writes.
				sin = stdin{kind: stdinUnknown}
			}
			c.stmts(x.Stmts, sin, depth)
			return false
		}
		return true
	})
}

// isNilNode reports whether n is nil or a typed nil pointer.
func isNilNode(n syntax.Node) bool {
	switch x := n.(type) {
	case nil:
		return true
	case *syntax.Word:
		return x == nil
	case syntax.Loop:
		return x == nil
	}
	return false
}

// assign checks a variable assignment: nested commands, and variables whose
// value a shell or tool later runs as code.
func (c *checker) assign(as *syntax.Assign, in stdin, depth int) {
	if as == nil {
		return
	}
	if as.Value != nil {
		c.nested(as.Value, in, depth)
	}
	if as.Array != nil {
		c.nested(as.Array, in, depth)
	}
	if as.Index != nil {
		c.nested(as.Index, in, depth)
	}
	if as.Name == nil || as.Value == nil {
		return
	}
	val := evalParts(as.Value.Parts)
	val.word = as.Value
	c.arithmeticInjection(val.val)
	if len(as.Value.Parts) == 1 {
		if ps, ok := as.Value.Parts[0].(*syntax.ProcSubst); ok {
			val.proc = ps
		}
	}
	c.codeVariable(as.Name.Value, val, in, depth)
}

// programName resolves the program a command word names: /bin/rm → rm.
func programName(word string) string {
	word = strings.TrimRight(word, "/")
	if word == "" {
		return ""
	}
	return path.Base(word)
}

// simple checks one simple command given its evaluated words.
func (c *checker) simple(argv []arg, in stdin, depth int) {
	if len(argv) == 0 || c.stop() {
		return
	}
	name := argv[0]
	if !name.known() && !(name.lit && (name.val == "[" || name.val == "[[")) {
		c.block(CategoryEvalInjection, "obfuscated command: the program name is only known at run time")
		return
	}
	prog := programName(name.val)
	args := argv[1:]
	if arithmeticBuiltins[prog] {
		for _, a := range args {
			c.arithmeticInjection(a.val)
		}
	}
	if !printsOnly[prog] {
		for _, a := range args {
			if reason := credentialPath(a); reason != "" {
				c.block(CategoryCredentials, "an argument names "+reason)
				return
			}
		}
	}
	c.program(prog, args, in, depth)
}

// printsOnly lists programs whose arguments are just text, never paths.
var printsOnly = map[string]bool{"echo": true, "printf": true, "true": true, "false": true, ":": true}
