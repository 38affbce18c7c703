package shellguard

import (
	"errors"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// NormalizeCommand returns the canonical form of a whole shell command, the
// pattern "Always allow" stores and later calls are matched against. Layout,
// comments and the quoting of plain words do not matter (`echo   a`,
// `echo 'a'` and `echo "a"` are the same), but every statement, operator,
// redirection and argument does (`echo a; id`, `echo a | sh`, `echo b` all
// differ from `echo a`). It fails when cmd cannot be parsed.
func NormalizeCommand(cmd string) (string, error) {
	if reason := unusableText(cmd); reason != "" {
		return "", errors.New(reason)
	}
	f, err := parseShell(cmd, syntax.LangBash)
	if err != nil {
		return "", fmt.Errorf("parse command: %w", err)
	}
	if len(f.Stmts) == 0 {
		return "", errors.New("the command runs nothing")
	}
	canonicalize(f)
	out, err := printShell(f)
	if err != nil {
		return "", err
	}
	// Guard against printer quirks: the printed form must parse back to
	// the very same program.
	back, err := parseShell(out, syntax.LangBash)
	if err != nil {
		return "", fmt.Errorf("normalized command does not parse: %w", err)
	}
	canonicalize(back)
	if fingerprint(back) != fingerprint(f) {
		return "", errors.New("the command cannot be normalized faithfully")
	}
	// The same must hold for the POSIX sh reading (dash runs commands).
	if orig, err := posixFingerprint(cmd); err == nil {
		norm, err := posixFingerprint(out)
		if err != nil || norm != orig {
			return "", errors.New("the command cannot be normalized faithfully for POSIX sh")
		}
	}
	return out, nil
}

// posixFingerprint is the fingerprint of src as a POSIX shell reads it
// (with bash's &> split the way dash splits it). It fails when src is not
// POSIX syntax.
func posixFingerprint(src string) (string, error) {
	f, err := parseShell(src, syntax.LangBash)
	if err != nil {
		return "", err
	}
	pf, err := parseShell(splitAmpRedirects(src, f), syntax.LangPOSIX)
	if err != nil {
		return "", err
	}
	canonicalize(pf)
	return fingerprint(pf), nil
}

// printShell prints a program in the canonical layout.
func printShell(f *syntax.File) (string, error) {
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, f); err != nil {
		return "", fmt.Errorf("print command: %w", err)
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// fingerprint describes a program's structure and text, without positions.
func fingerprint(f *syntax.File) string {
	var b strings.Builder
	syntax.Walk(f, func(n syntax.Node) bool {
		if n == nil {
			b.WriteString(";")
			return true
		}
		fmt.Fprintf(&b, "%T", n)
		switch x := n.(type) {
		case *syntax.Lit:
			fmt.Fprintf(&b, "%q", x.Value)
		case *syntax.SglQuoted:
			fmt.Fprintf(&b, "%v%q", x.Dollar, x.Value)
		case *syntax.DblQuoted:
			fmt.Fprintf(&b, "%v", x.Dollar)
		case *syntax.Stmt:
			fmt.Fprintf(&b, "%v%v%v%v", x.Negated, x.Background, x.Coprocess, x.Disown)
		case *syntax.BinaryCmd:
			fmt.Fprintf(&b, "%v", x.Op)
		case *syntax.Redirect:
			fmt.Fprintf(&b, "%v", x.Op)
		case *syntax.ParamExp:
			fmt.Fprintf(&b, "%v%v%v%v", x.Short, x.Excl, x.Length, x.Names)
		case *syntax.Assign:
			fmt.Fprintf(&b, "%v%v", x.Append, x.Naked)
		case *syntax.ProcSubst:
			fmt.Fprintf(&b, "%v", x.Op)
		}
		b.WriteByte(' ')
		return true
	})
	return b.String()
}

// canonicalize rewrites the plain words of a program in canonical quoting.
func canonicalize(f *syntax.File) {
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CallExpr:
			for _, as := range x.Assigns {
				canonicalWord(as.Value)
			}
			for _, w := range x.Args {
				canonicalWord(w)
			}
		case *syntax.DeclClause:
			for _, as := range x.Args {
				canonicalWord(as.Value)
			}
		case *syntax.Redirect:
			if x.Op != syntax.Hdoc && x.Op != syntax.DashHdoc {
				canonicalWord(x.Word)
			}
		case *syntax.WordIter:
			for _, w := range x.Items {
				canonicalWord(w)
			}
		case *syntax.CaseClause:
			canonicalWord(x.Word)
			for _, item := range x.Items {
				for _, p := range item.Patterns {
					canonicalWord(p)
				}
			}
		}
		return true
	})
}

// canonicalWord rewrites a word made only of plain text (however quoted) as
// one literal in canonical quoting. Words with expansions, globs, braces or
// tildes keep their form, since quoting them would change their meaning.
func canonicalWord(w *syntax.Word) {
	if w == nil || len(w.Parts) == 0 || !plainWord(w) {
		return
	}
	a := evalParts(w.Parts)
	if !a.lit {
		return
	}
	q, err := syntax.Quote(a.val, syntax.LangBash)
	if err != nil || strings.HasPrefix(q, "$") {
		return // non-printable text would need bash-only $'…' quoting
	}
	w.Parts = []syntax.WordPart{&syntax.Lit{ValuePos: w.Pos(), ValueEnd: w.End(), Value: q}}
}

// plainWord reports whether w is text only: unquoted literals without
// pattern, brace or tilde characters, single quotes, or double quotes
// without expansions.
func plainWord(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if hasSpecialUnquoted(p.Value) {
				return false
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				return false // bash decodes $'…', dash does not: keep it as written
			}
		case *syntax.DblQuoted:
			if p.Dollar {
				return false
			}
			for _, q := range p.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// hasSpecialUnquoted reports whether an unquoted literal has characters the
// shell expands: * ? [ { ~.
func hasSpecialUnquoted(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '*', '?', '[', '{', '~':
			return true
		}
	}
	return false
}
