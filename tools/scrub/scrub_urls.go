package scrub

import "strings"

// credentialFree reports whether a database URL carries no credential: no
// user info and no password parameter ("redis://127.0.0.1:6379/0"), or
// only a placeholder password, as in the daemon's own examples
// ("postgres://user:password@host:5432/db", "redis://[user:password@]host").
// Anything else, a bare user name included, is redacted whole.
func credentialFree(u string) bool {
	if strings.Contains(strings.ToLower(u), "password=") {
		return false
	}
	_, rest, _ := strings.Cut(u, "://")
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	at := strings.LastIndexByte(rest, '@')
	if at < 0 {
		return true
	}
	info := strings.TrimPrefix(rest[:at], "[")
	_, pw, ok := strings.Cut(info, ":")
	return ok && placeholderPassword(pw)
}

// placeholderPassword reports whether pw stands for a password in an
// example or a template rather than being one.
func placeholderPassword(pw string) bool {
	switch strings.ToLower(pw) {
	case "password", "passwd", "pass":
		return true
	}
	return len(pw) > 2 && (pw[0] == '<' && pw[len(pw)-1] == '>' || strings.HasPrefix(pw, "${") && pw[len(pw)-1] == '}')
}
