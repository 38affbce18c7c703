package bot

import (
	"fmt"
	"strings"
	"unicode"
)

// InvisibleWarning follows a command shown with invisible characters made
// visible.
const InvisibleWarning = "⚠️ Invisible or look-alike space characters are shown as ⟨U+…⟩: exactly this text would run."

// isInvisible reports whether r changes what a command does while showing
// nothing (or only a space) on screen: format characters (zero-width
// spaces and joiners, bidi controls, soft hyphen, tag characters), control
// characters other than newline and tab, line and paragraph separators,
// spaces other than the ASCII one, and variation selectors.
func isInvisible(r rune) bool {
	switch {
	case r == '\n' || r == '\t' || r == ' ':
		return false
	case unicode.Is(unicode.Cf, r), unicode.Is(unicode.Cc, r), unicode.Is(unicode.Zl, r),
		unicode.Is(unicode.Zp, r), unicode.Is(unicode.Zs, r):
		return true
	case unicode.Is(unicode.Variation_Selector, r):
		return true
	}
	return false
}

// ShowInvisible writes every invisible character of s (see isInvisible)
// as ⟨U+XXXX⟩ and reports whether there was any.
func ShowInvisible(s string) (string, bool) {
	if strings.IndexFunc(s, isInvisible) < 0 {
		return s, false
	}
	var b strings.Builder
	for _, r := range s {
		if isInvisible(r) {
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String(), true
}

// CommandBlock shows a command to the people who decide on it or wait for
// it: a code block of exactly what would run, with invisible characters
// made visible and a warning line when there are any.
func CommandBlock(cmd string) string {
	shown, hidden := ShowInvisible(cmd)
	if !hidden {
		return codeBlock(cmd)
	}
	return codeBlock(shown) + "\n" + InvisibleWarning
}
