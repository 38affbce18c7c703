package shellguard

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// unknownPart stands for the part of a word that is only known when the
// shell runs ($VAR, $(…), globs). It reads like a glob on purpose: the path
// rules treat it as "could be anything".
const unknownPart = "*"

// maxBraceFields bounds brace expansion ({a,b}{c,d}…) when evaluating words.
const maxBraceFields = 64

// arg is one evaluated word of a command line as the guard sees it.
type arg struct {
	val   string            // value; parts unknown before running are rendered as "*"
	lit   bool              // every part of the value is known before running
	glob  bool              // contains unquoted pattern characters (* ? [ or extglob)
	brace bool              // came from a brace expansion
	tilde bool              // starts with an unquoted ~ (home directory)
	head  bool              // starts with a part unknown before running
	proc  *syntax.ProcSubst // the word is exactly a process substitution
	word  *syntax.Word      // source word; nil for synthetic args
}

// unknownArg is an argument that only exists at run time (xargs input).
func unknownArg() arg { return arg{val: unknownPart, head: true} }

// literalArg is a synthetic, fully known argument.
func literalArg(s string) arg { return arg{val: s, lit: true} }

// known reports whether the arg is a plain string the guard can reason about.
func (a arg) known() bool { return a.lit && !a.glob && !a.brace }

// evalWords evaluates the words of a command line, expanding braces the way
// bash does.
func evalWords(words []*syntax.Word) []arg {
	out := make([]arg, 0, len(words))
	for _, w := range words {
		out = append(out, evalWord(w)...)
	}
	return out
}

// evalWord evaluates one word. A word with brace expansion yields one arg
// per field (bounded); otherwise exactly one.
func evalWord(w *syntax.Word) []arg {
	if len(w.Parts) == 1 {
		if ps, ok := w.Parts[0].(*syntax.ProcSubst); ok {
			return []arg{{val: unknownPart, head: true, proc: ps, word: w}}
		}
	}
	split := &syntax.Word{Parts: slices.Clone(w.Parts)}
	if !syntax.SplitBraces(split) || !slices.ContainsFunc(split.Parts, isBraceExp) {
		a := evalParts(w.Parts)
		a.word = w
		return []arg{a}
	}
	fields := expandBraces(split.Parts)
	if fields == nil {
		return []arg{{val: unknownPart, brace: true, head: true, word: w}}
	}
	out := make([]arg, 0, len(fields))
	for _, parts := range fields {
		a := evalParts(parts)
		a.brace = true
		a.word = w
		out = append(out, a)
	}
	return out
}

func isBraceExp(p syntax.WordPart) bool {
	_, ok := p.(*syntax.BraceExp)
	return ok
}

// expandBraces turns word parts containing BraceExp nodes into the list of
// fields bash would produce. It returns nil when the expansion is too large
// or uses sequences ({1..9}), whose values the guard does not model.
func expandBraces(parts []syntax.WordPart) [][]syntax.WordPart {
	fields := [][]syntax.WordPart{nil}
	for _, p := range parts {
		br, ok := p.(*syntax.BraceExp)
		if !ok {
			for i := range fields {
				fields[i] = append(slices.Clip(fields[i]), p)
			}
			continue
		}
		if br.Sequence {
			return nil
		}
		var next [][]syntax.WordPart
		for _, elem := range br.Elems {
			sub := expandBraces(elem.Parts)
			if sub == nil {
				return nil
			}
			for _, f := range fields {
				for _, s := range sub {
					next = append(next, append(slices.Clip(f), s...))
					if len(next) > maxBraceFields {
						return nil
					}
				}
			}
		}
		fields = next
	}
	return fields
}

// evalParts evaluates word parts without brace expansion.
func evalParts(parts []syntax.WordPart) arg {
	a := arg{lit: true}
	var b strings.Builder
	unknown := func() {
		if b.Len() == 0 {
			a.head = true
		}
		a.lit = false
		b.WriteString(unknownPart)
	}
	for i, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if i == 0 && strings.HasPrefix(p.Value, "~") {
				a.tilde = true
			}
			if unquoteLit(&b, p.Value) {
				a.glob = true
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				// bash decodes $'…'; dash reads "$" and a quoted string,
				// which the POSIX reading of the command covers.
				b.WriteString(decodeANSIC(p.Value))
				continue
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			// $"…" is "…" unless a translation catalog is installed.
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					unquoteDblLit(&b, l.Value)
					continue
				}
				unknown()
			}
		case *syntax.ExtGlob:
			a.glob = true
			unknown()
		default: // ParamExp, CmdSubst, ArithmExp, ProcSubst, BraceExp…
			unknown()
		}
	}
	a.val = b.String()
	return a
}

// unquoteLit appends an unquoted literal with backslash escapes removed and
// reports whether it contains unescaped pattern characters.
func unquoteLit(b *strings.Builder, s string) (glob bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		case c == '*' || c == '?' || c == '[':
			glob = true
			b.WriteByte(c)
		default:
			// Includes a trailing lone backslash, which stays literal.
			b.WriteByte(c)
		}
	}
	return glob
}

// unquoteDblLit appends a literal from inside double quotes, where a
// backslash only escapes $ ` " \ and newline.
func unquoteDblLit(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
			c = s[i]
		}
		b.WriteByte(c)
	}
}

// joinArgs joins literal args with spaces the way eval and sh -c see them.
// ok is false when any arg is not known before running.
func joinArgs(args []arg) (string, bool) {
	vals := make([]string, len(args))
	for i, a := range args {
		if !a.lit {
			return "", false
		}
		vals[i] = a.val
	}
	return strings.Join(vals, " "), true
}

// wordText returns a word's value when it is fully known (heredoc bodies,
// here-strings, assignment values).
func wordText(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", true
	}
	a := evalParts(w.Parts)
	return a.val, a.lit
}

// decodeANSIC decodes the body of a bash $'…' string. Like bash, it stops at
// a NUL byte.
func decodeANSIC(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case 'c':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i] & 0x1f)
			} else {
				b.WriteString("\\c")
			}
		case 'x', 'u', 'U':
			maxDigits := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			n, digits := 0, 0
			for digits < maxDigits && i+1 < len(s) && isHexDigit(s[i+1]) {
				i++
				n = n*16 + hexValue(s[i])
				digits++
			}
			switch {
			case digits == 0:
				b.WriteByte('\\')
				b.WriteByte(e)
			case e == 'x':
				b.WriteByte(byte(n))
			default:
				b.WriteRune(rune(n))
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			n := int(e - '0')
			for digits := 1; digits < 3 && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '7'; digits++ {
				i++
				n = n*8 + int(s[i]-'0')
			}
			b.WriteByte(byte(n))
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	out := b.String()
	if i := strings.IndexByte(out, 0); i >= 0 {
		out = out[:i]
	}
	return out
}

func isHexDigit(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func hexValue(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}
