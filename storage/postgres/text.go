package postgres

import (
	"strings"
	"unicode/utf8"
)

// storable makes s storable in a PostgreSQL text column: a text value cannot
// hold NUL bytes or invalid UTF-8 (a tool that read a binary file produces
// both), so those are replaced with U+FFFD instead of failing the write.
func storable(s string) string {
	if utf8.ValidString(s) && !strings.ContainsRune(s, 0) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// storableList makes every string of list storable; a nil list is an
// empty one (text[] columns here are NOT NULL).
func storableList(list []string) []string {
	out := make([]string, 0, len(list))
	for _, s := range list {
		out = append(out, storable(s))
	}
	return out
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// nullIfEmpty maps "" to SQL NULL.
func nullIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
