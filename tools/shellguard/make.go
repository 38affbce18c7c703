package shellguard

import (
	"regexp"
	"strings"
)

// makePrograms are the make implementations the guard reads makefiles for.
var makePrograms = setOf("make", "gmake", "bmake", "pmake", "remake")

// makeCmd checks make: a makefile read from stdin (-f -, -f /dev/stdin) or
// given inline (--eval) is code like `sh -c`; its recipes and $(shell …)
// calls are checked as commands. A SHELL or .SHELLFLAGS override changes
// how every recipe runs, so it is a warning. A makefile on disk is left to
// the approvers.
func (c *checker) makeCmd(prog string, args []arg, in stdin, depth int) {
	for i := 0; i < len(args) && c.verdict == nil; i++ {
		a := args[i]
		v := a.val
		next := func() (arg, bool) {
			if i+1 < len(args) {
				i++
				return args[i], true
			}
			return arg{}, false
		}
		var file, eval arg
		var hasFile, hasEval bool
		switch {
		case !a.lit:
			continue
		case v == "--":
			return
		case v == "-f" || v == "--file" || v == "--makefile":
			file, hasFile = next()
		case strings.HasPrefix(v, "--file=") || strings.HasPrefix(v, "--makefile="):
			_, val, _ := strings.Cut(v, "=")
			file, hasFile = withVal(a, val), true
		case strings.HasPrefix(v, "-f") && !strings.HasPrefix(v, "--"):
			file, hasFile = withVal(a, v[2:]), true
		case v == "-E" || v == "--eval":
			eval, hasEval = next()
		case strings.HasPrefix(v, "--eval="):
			eval, hasEval = withVal(a, strings.TrimPrefix(v, "--eval=")), true
		case strings.HasPrefix(v, "-E") && !strings.HasPrefix(v, "--"):
			eval, hasEval = withVal(a, v[2:]), true
		case strings.HasPrefix(v, "SHELL=") || strings.HasPrefix(v, ".SHELLFLAGS=") ||
			strings.HasPrefix(v, "MAKESHELL="):
			c.warn("make runs every recipe through a shell or shell flags given on its command line")
		}
		switch {
		case hasFile && file.proc != nil:
			c.procCode(prog, file.proc)
		case hasFile && file.lit && (file.val == "-" || stdinPaths[file.val]):
			c.stdinProgram(prog, "make", in, depth)
		case hasFile && fdPath(file.val):
			c.block(CategoryEvalInjection, prog+" reads a makefile from an open file descriptor the guard cannot see")
		case hasEval && !eval.lit:
			c.dynamicCode(prog, eval)
		case hasEval:
			c.makefile(eval.val, depth)
		}
	}
}

// makeVarRef matches make variable references $(NAME) and ${NAME}.
var makeVarRef = regexp.MustCompile(`\$[({][A-Za-z0-9_.@<^?*%+-]+[)}]`)

// makefile checks the commands in makefile text: recipe lines (after a
// tab, or after `;` on a rule line), `VAR != command` and $(shell …).
func (c *checker) makefile(text string, depth int) {
	for _, cmd := range shellFunctionCalls(text) {
		c.script(makeToShell(cmd), depth+1, stdin{kind: stdinNull})
	}
	for _, line := range strings.Split(text, "\n") {
		if c.verdict != nil {
			return
		}
		var recipe string
		switch {
		case strings.HasPrefix(line, "\t"):
			recipe = line[1:]
		case strings.Contains(line, "!="):
			_, recipe, _ = strings.Cut(line, "!=")
		default:
			colon := strings.IndexByte(line, ':')
			semi := strings.IndexByte(line, ';')
			if colon < 0 || semi < colon || strings.HasPrefix(line[colon:], ":=") {
				continue
			}
			recipe = line[semi+1:]
		}
		recipe = strings.TrimLeft(strings.TrimSpace(recipe), "@+-")
		if recipe != "" {
			c.script(makeToShell(recipe), depth+1, stdin{kind: stdinNull})
		}
	}
}

// makeToShell turns a recipe into the shell text make hands the shell:
// $$ is a dollar; make variables are values the guard does not know.
func makeToShell(recipe string) string {
	recipe = makeVarRef.ReplaceAllString(recipe, unknownExpansion)
	return strings.ReplaceAll(recipe, "$$", "$")
}

// shellFunctionCalls returns the commands of $(shell …) calls in make text.
func shellFunctionCalls(text string) []string {
	var out []string
	for rest := text; len(out) < 64; {
		i := strings.Index(rest, "$(shell ")
		if i < 0 {
			i = strings.Index(rest, "${shell ")
		}
		if i < 0 {
			return out
		}
		open, close := rest[i+1], byte(')')
		if open == '{' {
			close = '}'
		}
		depthN, j := 1, i+len("$(shell ")
		for ; j < len(rest) && depthN > 0; j++ {
			switch rest[j] {
			case open:
				depthN++
			case close:
				depthN--
			}
		}
		if depthN > 0 {
			out = append(out, rest[i+len("$(shell "):])
			return out
		}
		out = append(out, rest[i+len("$(shell "):j-1])
		rest = rest[j:]
	}
	return out
}

// fdPath reports whether p names an open file descriptor other than stdin
// (/dev/fd/3, /proc/self/fd/3).
func fdPath(p string) bool {
	c := cleanPath(p)
	for _, prefix := range []string{"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"} {
		if n, ok := strings.CutPrefix(c, prefix); ok {
			return n != "0" && (isDigits(n) || strings.Contains(n, unknownPart))
		}
	}
	return false
}
