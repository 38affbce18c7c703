package shellguard

import "strings"

// sedScripts returns the scripts a sed command line runs: every -e /
// --expression value, or else its first operand.
func sedScripts(args []arg) []string {
	var scripts []string
	for i, a := range args {
		if !a.lit {
			continue
		}
		switch v := a.val; {
		case (v == "-e" || v == "--expression") && i+1 < len(args):
			scripts = append(scripts, args[i+1].val)
		case strings.HasPrefix(v, "--expression="):
			scripts = append(scripts, strings.TrimPrefix(v, "--expression="))
		case strings.HasPrefix(v, "-e") && len(v) > 2 && !strings.HasPrefix(v, "--"):
			scripts = append(scripts, v[2:])
		}
	}
	if len(scripts) > 0 {
		return scripts
	}
	_, ops := splitOperands(args, "efl", "expression", "file", "line-length")
	if len(ops) > 0 {
		return []string{ops[0].val}
	}
	return nil
}

// sedExecutes reports whether a sed script runs shell commands: GNU sed's
// e command ("1e id") or the e flag of s ("s/x/id/e").
func sedExecutes(script string) bool {
	for i := 0; i < len(script); {
		// Skip separators and an address (line numbers, $, /regex/, ranges).
		for i < len(script) && strings.IndexByte(" \t\n;{}!", script[i]) >= 0 {
			i++
		}
		for i < len(script) && (script[i] >= '0' && script[i] <= '9' || script[i] == '$' || script[i] == ',' || script[i] == '~' || script[i] == '+') {
			i++
		}
		if i < len(script) && (script[i] == '/' || script[i] == '\\') {
			i = skipDelimited(script, i)
			continue
		}
		if i >= len(script) {
			return false
		}
		switch script[i] {
		case 'e':
			return true
		case 's', 'y':
			cmd := script[i]
			if i+1 >= len(script) {
				return false
			}
			delim := script[i+1]
			// s/pattern/replacement/flags: from the first delimiter to
			// the third; j ends just past it, where the flags start.
			j := i + 1
			for n := 0; n < 2 && j < len(script); n++ {
				j = skipDelimitedBy(script, j, delim) - 1
			}
			j = min(j+1, len(script))
			flagsEnd := j
			for flagsEnd < len(script) && strings.IndexByte(" \t\n;}", script[flagsEnd]) < 0 {
				flagsEnd++
			}
			if cmd == 's' && strings.ContainsRune(script[j:flagsEnd], 'e') {
				return true
			}
			i = flagsEnd
		default:
			// Any other command: skip to the end of it.
			for i < len(script) && script[i] != ';' && script[i] != '\n' {
				i++
			}
		}
	}
	return false
}

// skipDelimited skips a /regex/ (or \cREGEXc) address starting at i.
func skipDelimited(s string, i int) int {
	if s[i] == '\\' && i+1 < len(s) {
		return skipDelimitedBy(s, i+1, s[i+1])
	}
	return skipDelimitedBy(s, i, s[i])
}

// skipDelimitedBy skips from the delimiter at i to just past the next
// unescaped delim.
func skipDelimitedBy(s string, i int, delim byte) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case delim:
			return j + 1
		}
	}
	return len(s)
}
