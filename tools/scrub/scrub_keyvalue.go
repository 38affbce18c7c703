package scrub

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// keyValueWords are the keys keyValue looks for, lower-cased.
var keyValueWords = []string{"key", "token", "secret", "password", "passwd", "authorization"}

// mayKeyValue reports whether text has one of keyValue's keys right
// before a ':' or '='.
func mayKeyValue(text string) bool {
	check := func(i int) bool {
		w := wordBefore(text, i)
		for _, k := range keyValueWords {
			if strings.HasSuffix(w, k) {
				return true
			}
		}
		return false
	}
	return eachIndex(text, ":", check) || eachIndex(text, "=", check)
}

// keyValue matches "password=hunter22", "Authorization: Bearer abc…" and the
// like; the key is kept and the value redacted. Its groups: 1 the key, 2 the
// separator, 3 the value.
var keyValue = regexp.MustCompile(`(?i)\b(api[_-]?key|access[_-]?token|auth[_-]?token|token|secret|password|passwd|authorization)(\s*[:=]\s*)(?:bearer\s+|basic\s+)?("[^"\s]{4,}"|'[^'\s]{4,}'|[^\s"',;]{4,})`)

// scrubKeyValues redacts the value of every keyValue match except where the
// text is a sentence going on ("token: check telegram.token"): the daemon's
// own hints and errors read like that, and redacting their words leaves
// advice nobody can follow.
func scrubKeyValues(text string) string {
	matches := keyValue.FindAllStringSubmatchIndex(text, -1)
	if len(matches) == 0 {
		return text
	}
	var b strings.Builder
	last := 0
	for _, m := range matches {
		sep, value, end := text[m[4]:m[5]], text[m[6]:m[7]], m[1]
		// After "Bearer " or "Basic " comes a credential, never prose.
		if m[5] == m[6] && isProse(sep, value, text[end:]) {
			continue
		}
		// The key, the separator and any "Bearer " stay; the value goes.
		b.WriteString(text[last:m[6]])
		b.WriteString(Redacted)
		last = end
	}
	b.WriteString(text[last:])
	return b.String()
}

// isProse reports whether value, after a key and sep, is a word of a
// sentence rather than a secret. It must be all of:
//
//   - after ": " (a colon and spaces on the same line, as prose writes
//     it): "key=value", "key:value" and a value on the next line are never
//     prose;
//   - a name-like word: one of proseWords, lower case or capitalised (a
//     hint's "check", "Telegram"), or a dotted lower-case config key
//     ("telegram.token"), or an upper-case variable name with underscores
//     ("SWITCHBOARD_LLM_API_KEY"), with at most a trailing '.', ':', ',',
//     ')', '!' or '?'; secrets have digits, mixed case or symbols;
//   - followed on the same line by a space and another word: a value at the
//     end of its line, as in YAML ("password: hunter"), stays redacted.
func isProse(sep, value, rest string) bool {
	before, after, ok := strings.Cut(sep, ":")
	if !ok || strings.Trim(before, " \t") != "" || after == "" || strings.Trim(after, " \t") != "" {
		return false
	}
	if !nameLike(strings.TrimRight(value, ".:,)!?")) {
		return false
	}
	next := strings.TrimLeft(rest, " \t")
	if len(next) == len(rest) || next == "" {
		return false
	}
	r, _ := utf8.DecodeRuneInString(next)
	return unicode.IsLetter(r) || r == '(' || r == '`'
}

// nameLike reports whether w is a plain word, a dotted lower-case key or an
// upper-case name with underscores (see isProse).
func nameLike(w string) bool {
	if w == "" {
		return false
	}
	lower, upper, dots, unders := 0, 0, 0, 0
	for i, r := range w {
		switch {
		case r >= 'a' && r <= 'z':
			lower++
		case r >= 'A' && r <= 'Z':
			if i > 0 {
				upper++
			}
		case r == '.' && i > 0 && i < len(w)-1 && w[i-1] != '.':
			dots++
		case r == '_' && i > 0:
			unders++
		default:
			return false
		}
	}
	switch {
	case dots > 0:
		// a config key: lower-case segments ("telegram.webhook_secret")
		return upper == 0 && w[0] >= 'a' && w[0] <= 'z'
	case unders > 0:
		// a variable name ("SWITCHBOARD_LLM_API_KEY"); lower-case snake
		// case is left out: "sk_live_…" keys look like it
		return lower == 0
	}
	// an ordinary word of advice, lower case or capitalised; any other
	// word may be a password made of letters
	return upper == 0 && proseWords[strings.ToLower(w)]
}

// proseWords are the words that follow "token: " or "password: " in a
// sentence rather than being the secret: a hint's verb ("token: check
// telegram.token"), what is wrong with the value, a platform's name. The
// keyValue pattern only matches values of four characters or more. A
// message of the daemon's that needs another word fails
// TestScrubLeavesTheDaemonsOwnMessagesAlone until it is added here.
var proseWords = map[string]bool{
	"check": true, "change": true, "remove": true, "give": true, "pass": true, "please": true, "must": true,
	"should": true, "need": true, "needs": true, "have": true, "does": true, "with": true,
	"from": true, "when": true, "only": true, "also": true, "this": true, "that": true,
	"were": true, "none": true, "missing": true, "empty": true, "unset": true, "invalid": true,
	"wrong": true, "required": true, "unknown": true, "rejected": true, "refused": true,
	"expired": true, "revoked": true, "example": true, "telegram": true, "slack": true,
	"discord": true, "redis": true, "postgres": true, "postgresql": true,
}
