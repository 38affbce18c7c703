package scrub

import (
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Redacted replaces every credential the scrubber finds.
const Redacted = "[REDACTED]"

// minSecretLen is the shortest configured value the scrubber will redact;
// shorter values would shred ordinary text.
const minSecretLen = 6

// staticPattern is a well-known credential shape. may is a cheap test
// that must hold for the pattern to match at all, so ordinary text skips
// the (slow) regular expression.
type staticPattern struct {
	re  *regexp.Regexp
	may func(text string) bool
	// keep, when set, spares a match that is no credential after all.
	keep func(match string) bool
}

// containsAny is a may test: text holds one of subs.
func containsAny(subs ...string) func(string) bool {
	return func(text string) bool {
		for _, s := range subs {
			if strings.Contains(text, s) {
				return true
			}
		}
		return false
	}
}

var staticPatterns = []staticPattern{
	{re: regexp.MustCompile(`sk-ant-[A-Za-z0-9_\-]{20,}`), may: containsAny("sk-ant-")},
	{re: regexp.MustCompile(`sk-[A-Za-z0-9_\-]{20,}`), may: containsAny("sk-")},
	{re: regexp.MustCompile(`gh[pousr]_[A-Za-z0-9]{36,}`), may: containsAny("ghp_", "gho_", "ghu_", "ghs_", "ghr_")},
	{re: regexp.MustCompile(`AKIA[A-Z0-9]{16}`), may: containsAny("AKIA")},
	{re: regexp.MustCompile(`xox[abposr]-[A-Za-z0-9\-]{10,}`), may: containsAny("xox")},
	{re: regexp.MustCompile(`xapp-[A-Za-z0-9\-]{10,}`), may: containsAny("xapp-")},
	{re: regexp.MustCompile(`\b[0-9]{6,12}:[A-Za-z0-9_\-]{30,}\b`), may: mayTelegramToken}, // Telegram bot token
	{re: regexp.MustCompile(`(?i)\b(postgres(?:ql)?|mysql|mongodb(?:\+srv)?|redis|rediss|amqp)://[^\s"'<>]+`), may: mayDatabaseURL, keep: credentialFree},
	{re: regexp.MustCompile(`(?m)\b([A-Z][A-Z0-9_]*(?:KEY|SECRET|TOKEN|PASSWORD|CREDENTIAL|CREDENTIALS|DSN))=[^\s]+`),
		may: containsAny("KEY=", "SECRET=", "TOKEN=", "PASSWORD=", "CREDENTIAL=", "CREDENTIALS=", "DSN=")},
	{re: regexp.MustCompile(`\b[0-9a-fA-F]{64,}\b`), may: mayLongHex},
}

// wordBefore returns the lower-cased word (letters, '_', '-', '+') that
// ends right before text[i], spaces and tabs skipped, at most 24 bytes.
func wordBefore(text string, i int) string {
	for i > 0 && (text[i-1] == ' ' || text[i-1] == '\t') {
		i--
	}
	j := i
	for j > 0 && i-j < 24 {
		c := text[j-1] | 0x20 // ASCII lower case
		if !(c >= 'a' && c <= 'z' || text[j-1] == '_' || text[j-1] == '-' || text[j-1] == '+') {
			break
		}
		j--
	}
	return strings.ToLower(text[j:i])
}

// eachIndex calls f with every index of sep in text until f returns true.
func eachIndex(text, sep string, f func(i int) bool) bool {
	for off := 0; ; {
		i := strings.Index(text[off:], sep)
		if i < 0 {
			return false
		}
		if f(off + i) {
			return true
		}
		off += i + len(sep)
	}
}

// mayDatabaseURL reports whether text has "<scheme>://" for one of the
// database schemes.
func mayDatabaseURL(text string) bool {
	return eachIndex(text, "://", func(i int) bool {
		switch wordBefore(text, i) {
		case "postgres", "postgresql", "mysql", "mongodb", "mongodb+srv", "redis", "rediss", "amqp":
			return true
		}
		return false
	})
}

// mayTelegramToken reports whether text has digits, a colon and 30
// token characters in a row: the shape of a bot token.
func mayTelegramToken(text string) bool {
	for i := strings.IndexByte(text, ':'); i >= 0; {
		if i > 0 && text[i-1] >= '0' && text[i-1] <= '9' && tokenRun(text[i+1:]) >= 30 {
			return true
		}
		j := strings.IndexByte(text[i+1:], ':')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// tokenRun counts the leading [A-Za-z0-9_-] bytes of s.
func tokenRun(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return i
		}
	}
	return len(s)
}

// mayLongHex reports whether text has 64 hex digits in a row.
func mayLongHex(text string) bool {
	run := 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' {
			if run++; run >= 64 {
				return true
			}
			continue
		}
		run = 0
	}
	return false
}

// Scrubber removes credentials from text: a fixed set of well-known patterns
// plus every secret value it was given (configured tokens, API keys, URL
// passwords). Matching by value catches secrets no pattern knows.
type Scrubber struct {
	mu       sync.RWMutex
	values   []string
	replacer *strings.Replacer // every value
	short    *strings.Replacer // values too short for the index
	// normalized are the secrets' letters and digits, case-folded (see
	// normalize), for secrets long enough to look for that way; index
	// finds them.
	normalized []string
	index      *secretIndex
}

// New returns a scrubber that also redacts the given values.
func New(values ...string) *Scrubber {
	s := &Scrubber{}
	s.Add(values...)
	return s
}

// Add registers more secret values. A value that is a URL with a password
// also registers the password alone. Values shorter than six characters are
// ignored.
func (s *Scrubber) Add(values ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]bool{}
	for _, v := range s.values {
		seen[v] = true
	}
	add := func(v string) {
		v = strings.TrimSpace(v)
		if len(v) < minSecretLen || seen[v] {
			return
		}
		seen[v] = true
		s.values = append(s.values, v)
		if esc := url.QueryEscape(v); esc != v && !seen[esc] {
			seen[esc] = true
			s.values = append(s.values, esc)
		}
	}
	addNormalized := func(v string) {
		if n := normalize(v); len(n) >= minNormalizedLen && !slices.Contains(s.normalized, n) {
			s.normalized = append(s.normalized, n)
		}
	}
	addAll := func(v string) {
		add(v)
		addNormalized(v)
		// Encodings go to the normalised search only: it ignores case and
		// punctuation, so hex also catches percent-encoding ("%5A%71…").
		for _, e := range encodings(strings.TrimSpace(v)) {
			addNormalized(e)
		}
	}
	for _, v := range values {
		if len(strings.TrimSpace(v)) < minSecretLen {
			continue
		}
		addAll(v)
		if u, err := url.Parse(v); err == nil && u.User != nil {
			if pw, ok := u.User.Password(); ok {
				addAll(pw)
			}
		}
	}
	s.index = newSecretIndex(s.normalized)
	// Longest first, so a secret containing another is replaced whole.
	sort.Slice(s.values, func(i, j int) bool { return len(s.values[i]) > len(s.values[j]) })
	pairs := make([]string, 0, 2*len(s.values))
	for _, v := range s.values {
		pairs = append(pairs, v, Redacted)
	}
	s.replacer = strings.NewReplacer(pairs...)
	// Values whose normalised form the index finds need the (slower) exact
	// replacer only when the index finds something.
	var shortPairs []string
	for _, v := range s.values {
		if n := len(normalize(v)); n < minNormalizedLen || len(v) > maxSpreadPerRune*n {
			shortPairs = append(shortPairs, v, Redacted)
		}
	}
	s.short = nil
	if len(shortPairs) > 0 {
		s.short = strings.NewReplacer(shortPairs...)
	}
}

// Scrub returns text with every known secret replaced by [REDACTED].
func (s *Scrubber) Scrub(text string) string {
	if text == "" {
		return text
	}
	s.mu.RLock()
	all, short, index := s.replacer, s.short, s.index
	s.mu.RUnlock()
	if short != nil {
		text = short.Replace(text)
	}
	// Every other value, exact or re-cased, split, spaced out, marked up
	// or encoded, shows in the normalised text: ordinary text costs one
	// pass over it.
	if index.any(text) {
		text = all.Replace(text)
		text = scrubNormalized(text, index)
	}
	if mayKeyValue(text) {
		text = scrubKeyValues(text)
	}
	for _, p := range staticPatterns {
		switch {
		case !p.may(text):
		case p.keep == nil:
			text = p.re.ReplaceAllString(text, Redacted)
		default:
			text = p.re.ReplaceAllStringFunc(text, func(m string) string {
				if p.keep(m) {
					return m
				}
				return Redacted
			})
		}
	}
	return text
}
