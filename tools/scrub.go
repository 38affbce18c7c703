package tools

import (
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Redacted replaces every credential the scrubber finds.
const Redacted = "[REDACTED]"

// minSecretLen is the shortest configured value the scrubber will redact;
// shorter values would shred ordinary text.
const minSecretLen = 6

var staticPatterns = []*regexp.Regexp{
	regexp.MustCompile(`sk-ant-[A-Za-z0-9_\-]{20,}`),
	regexp.MustCompile(`sk-[A-Za-z0-9_\-]{20,}`),
	regexp.MustCompile(`gh[pousr]_[A-Za-z0-9]{36,}`),
	regexp.MustCompile(`AKIA[A-Z0-9]{16}`),
	regexp.MustCompile(`xox[abposr]-[A-Za-z0-9\-]{10,}`),
	regexp.MustCompile(`xapp-[A-Za-z0-9\-]{10,}`),
	regexp.MustCompile(`\b[0-9]{6,12}:[A-Za-z0-9_\-]{30,}\b`), // Telegram bot token
	regexp.MustCompile(`(?i)\b(postgres(?:ql)?|mysql|mongodb(?:\+srv)?|redis|rediss|amqp)://[^\s"'<>]+`),
	regexp.MustCompile(`(?m)\b([A-Z][A-Z0-9_]*(?:KEY|SECRET|TOKEN|PASSWORD|CREDENTIAL|CREDENTIALS|DSN))=[^\s]+`),
	regexp.MustCompile(`\b[0-9a-fA-F]{64,}\b`),
}

// keyValue matches "password=hunter22", "Authorization: Bearer abc…" and the
// like; the key is kept and the value redacted.
var keyValue = regexp.MustCompile(`(?i)\b(api[_-]?key|access[_-]?token|auth[_-]?token|token|secret|password|passwd|authorization)(\s*[:=]\s*)(?:bearer\s+|basic\s+)?("[^"\s]{4,}"|'[^'\s]{4,}'|[^\s"',;]{4,})`)

// Scrubber removes credentials from text: a fixed set of well-known patterns
// plus every secret value it was given (configured tokens, API keys, URL
// passwords). Matching by value catches secrets no pattern knows.
type Scrubber struct {
	mu       sync.RWMutex
	values   []string
	replacer *strings.Replacer
}

// NewScrubber returns a scrubber that also redacts the given values.
func NewScrubber(values ...string) *Scrubber {
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
	for _, v := range values {
		add(v)
		if u, err := url.Parse(v); err == nil && u.User != nil {
			if pw, ok := u.User.Password(); ok {
				add(pw)
			}
		}
	}
	// Longest first, so a secret containing another is replaced whole.
	sort.Slice(s.values, func(i, j int) bool { return len(s.values[i]) > len(s.values[j]) })
	pairs := make([]string, 0, 2*len(s.values))
	for _, v := range s.values {
		pairs = append(pairs, v, Redacted)
	}
	s.replacer = strings.NewReplacer(pairs...)
}

// Scrub returns text with every known secret replaced by [REDACTED].
func (s *Scrubber) Scrub(text string) string {
	if text == "" {
		return text
	}
	s.mu.RLock()
	r := s.replacer
	s.mu.RUnlock()
	if r != nil {
		text = r.Replace(text)
	}
	text = keyValue.ReplaceAllString(text, "${1}${2}"+Redacted)
	for _, re := range staticPatterns {
		text = re.ReplaceAllString(text, Redacted)
	}
	return text
}
