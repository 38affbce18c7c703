package shellguard

import (
	"sort"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// funcDef is a shell function a program defines, with the text it was
// parsed from (positions in decl are offsets into src).
type funcDef struct {
	decl *syntax.FuncDecl
	src  string
}

// maxFunctionArgs bounds the arguments substituted into a function body.
const maxFunctionArgs = 64

// defineFunctions remembers the functions f defines, so their calls can be
// checked with the arguments they get: `r() { command rm "$@"; }; r -rf /`
// is `command rm -rf /`.
func (c *checker) defineFunctions(f *syntax.File, src string) {
	syntax.Walk(f, func(n syntax.Node) bool {
		if fd, ok := n.(*syntax.FuncDecl); ok && fd.Name != nil && fd.Body != nil {
			if c.funcs == nil {
				c.funcs = map[string]funcDef{}
			}
			c.funcs[fd.Name.Value] = funcDef{decl: fd, src: src}
		}
		return true
	})
}

// callFunction checks the body of the function argv calls, if it is one the
// program defines, with the call's arguments in place of $@, $*, $1…; the
// body was already checked on its own with those unknown.
func (c *checker) callFunction(argv []arg, in stdin, depth int) {
	if len(argv) == 0 || !argv[0].lit || c.verdict != nil {
		return
	}
	name := argv[0].val
	fd, ok := c.funcs[name]
	if !ok || c.calling[name] {
		return
	}
	text, ok := substitutePositional(fd, argv[1:])
	if !ok {
		return
	}
	if c.calling == nil {
		c.calling = map[string]bool{}
	}
	c.calling[name] = true
	defer delete(c.calling, name)
	c.script(text, depth+1, in)
}

// substitutePositional returns the source of fd's body with its positional
// parameters replaced by args, shell-quoted. Arguments only known at run
// time become an unknown expansion. ok is false when the body cannot be
// cut out of its source.
func substitutePositional(fd funcDef, args []arg) (string, bool) {
	body := fd.decl.Body
	start, end := int(body.Pos().Offset()), int(body.End().Offset())
	if start < 0 || end > len(fd.src) || start >= end {
		return "", false
	}
	if len(args) > maxFunctionArgs {
		args = args[:maxFunctionArgs]
	}
	type span struct {
		from, to int
		text     string
	}
	var spans []span
	var quoted [][2]int
	sole := map[*syntax.ParamExp]bool{}
	syntax.Walk(body, func(n syntax.Node) bool {
		dq, ok := n.(*syntax.DblQuoted)
		if !ok {
			return true
		}
		quoted = append(quoted, [2]int{int(dq.Pos().Offset()), int(dq.End().Offset())})
		if len(dq.Parts) == 1 {
			if pe, ok := dq.Parts[0].(*syntax.ParamExp); ok && positional(pe) != "" {
				sole[pe] = true
				spans = append(spans, span{int(dq.Pos().Offset()), int(dq.End().Offset()), quotedWords(pe, args)})
			}
		}
		return true
	})
	inQuotes := func(off int) bool {
		for _, q := range quoted {
			if off > q[0] && off < q[1] {
				return true
			}
		}
		return false
	}
	syntax.Walk(body, func(n syntax.Node) bool {
		pe, ok := n.(*syntax.ParamExp)
		if !ok || sole[pe] || positional(pe) == "" {
			return true
		}
		from, to := int(pe.Pos().Offset()), int(pe.End().Offset())
		if inQuotes(from) {
			spans = append(spans, span{from, to, inDoubleQuotes(pe, args)})
		} else {
			spans = append(spans, span{from, to, quotedWords(pe, args)})
		}
		return true
	})
	sort.Slice(spans, func(i, j int) bool { return spans[i].from > spans[j].from })
	text := fd.src[start:end]
	last := len(text) + 1
	for _, s := range spans {
		from, to := s.from-start, s.to-start
		if from < 0 || to > len(text) || to > last {
			continue // nested in a span already replaced
		}
		text = text[:from] + s.text + text[to:]
		last = from
	}
	return text, true
}

// unknownExpansion stands for an argument only known at run time.
const unknownExpansion = "${__shellguard_unknown}"

// positional returns the parameter a plain expansion of a positional
// parameter names ("@", "*", "#", "1"…), or "" for anything else (other
// variables, or expansions with operators such as ${@:2}).
func positional(pe *syntax.ParamExp) string {
	if pe.Param == nil || pe.Excl || pe.Length || pe.Width || pe.Index != nil || pe.Slice != nil ||
		pe.Repl != nil || pe.Exp != nil || pe.Names != 0 {
		return ""
	}
	v := pe.Param.Value
	if v == "@" || v == "*" || v == "#" {
		return v
	}
	if _, err := strconv.Atoi(v); err == nil && v != "0" {
		return v
	}
	return ""
}

// selected returns the arguments an expansion of pe yields.
func selected(pe *syntax.ParamExp, args []arg) []arg {
	switch v := positional(pe); v {
	case "@", "*":
		return args
	case "#":
		return []arg{literalArg(strconv.Itoa(len(args)))}
	default:
		n, _ := strconv.Atoi(v)
		if n <= len(args) {
			return args[n-1 : n]
		}
		return []arg{literalArg("")}
	}
}

// quotedWords renders the arguments pe yields as separate shell words.
func quotedWords(pe *syntax.ParamExp, args []arg) string {
	sel := selected(pe, args)
	if len(sel) == 0 {
		return "''"
	}
	words := make([]string, 0, len(sel))
	for _, a := range sel {
		if !a.lit {
			words = append(words, `"`+unknownExpansion+`"`)
			continue
		}
		q, err := syntax.Quote(a.val, syntax.LangBash)
		if err != nil {
			q = `"` + unknownExpansion + `"`
		}
		words = append(words, q)
	}
	// "$*" would be one word; as separate words the guard sees the same
	// flags and paths.
	return strings.Join(words, " ")
}

// inDoubleQuotes renders the arguments pe yields inside a double-quoted
// string, joined by spaces.
func inDoubleQuotes(pe *syntax.ParamExp, args []arg) string {
	var b strings.Builder
	for i, a := range selected(pe, args) {
		if i > 0 {
			b.WriteByte(' ')
		}
		if !a.lit {
			b.WriteString(unknownExpansion)
			continue
		}
		for _, r := range a.val {
			if r == '"' || r == '\\' || r == '$' || r == '`' {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}
