package markup

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tagPattern matches the only tags TelegramHTML may write.
var tagPattern = regexp.MustCompile(`^<(?:(b|i|s|code|pre|blockquote)|a href="[^"<>]*"|code class="language-[A-Za-z0-9_+#.-]+"|/(b|i|s|code|pre|blockquote|a))>`)

var entityPattern = regexp.MustCompile(`^&(?:amp|lt|gt|quot);`)

// checkPart reports how part breaks TelegramHTML's promises: longer than
// limit UTF-16 units, invalid UTF-8, a tag outside the subset, a raw '<', '>'
// or '&', unbalanced or badly nested tags, or no visible text.
func checkPart(part string, limit int) error {
	if !utf8.ValidString(part) {
		return fmt.Errorf("invalid UTF-8")
	}
	if n := utf16Len(part); n > limit {
		return fmt.Errorf("%d UTF-16 units, limit %d", n, limit)
	}
	var stack []string
	inside := func(name string) bool {
		for _, s := range stack {
			if s == name {
				return true
			}
		}
		return false
	}
	visible := false
	for i := 0; i < len(part); {
		switch part[i] {
		case '<':
			m := tagPattern.FindStringSubmatch(part[i:])
			if m == nil {
				return fmt.Errorf("raw '<' or unknown tag at byte %d: %q", i, part[i:min(len(part), i+30)])
			}
			tag := m[0]
			i += len(tag)
			if strings.HasPrefix(tag, "</") {
				name := m[2]
				if len(stack) == 0 || stack[len(stack)-1] != name {
					return fmt.Errorf("unmatched %s, open %v", tag, stack)
				}
				stack = stack[:len(stack)-1]
				continue
			}
			name := m[1]
			switch {
			case strings.HasPrefix(tag, "<a "):
				name = "a"
			case strings.HasPrefix(tag, "<code "):
				name = "code"
				if len(stack) == 0 || stack[len(stack)-1] != "pre" || !strings.HasSuffix(part[:i-len(tag)], "<pre>") {
					return fmt.Errorf("%s outside <pre>", tag)
				}
			}
			if inside("code") || (inside("pre") && !strings.HasPrefix(tag, "<code ")) {
				return fmt.Errorf("%s inside code", tag)
			}
			if inside(name) {
				return fmt.Errorf("%s nested in itself", tag)
			}
			if inside("blockquote") && (name == "a" || name == "code" || name == "pre") {
				return fmt.Errorf("%s inside blockquote", tag)
			}
			if inside("a") && (name == "code" || name == "pre" || name == "blockquote") {
				return fmt.Errorf("%s inside a link", tag)
			}
			stack = append(stack, name)
		case '>':
			return fmt.Errorf("raw '>' at byte %d", i)
		case '&':
			m := entityPattern.FindString(part[i:])
			if m == "" {
				return fmt.Errorf("raw '&' at byte %d", i)
			}
			i += len(m)
			visible = true
		default:
			r, size := utf8.DecodeRuneInString(part[i:])
			if !unicode.IsSpace(r) {
				visible = true
			}
			i += size
		}
	}
	if len(stack) > 0 {
		return fmt.Errorf("unclosed %v", stack)
	}
	if !visible {
		return fmt.Errorf("no visible text")
	}
	return nil
}

// squash drops all whitespace, to compare text across different cuts.
func squash(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

// visibleText is what a reader sees across all parts, whitespace dropped.
func visibleText(parts []string) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(TelegramText(p))
	}
	return squash(b.String())
}
