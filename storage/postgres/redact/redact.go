// Package redact keeps a PostgreSQL password out of what the daemon shows:
// errors that may quote a connection string or a server's complaint, and
// database URLs in messages. Both the SQL store and the embedded server's
// supervisor wrap their errors with it.
package redact

import (
	"net/url"
	"strings"
)

// redactedError hides a secret wherever it appears in the message of the error
// it wraps, so a password never reaches a log or a user, and puts the message
// on one line.
type redactedError struct {
	err    error
	secret string
}

func (e *redactedError) Error() string {
	msg := e.err.Error()
	if e.secret != "" {
		msg = strings.ReplaceAll(msg, e.secret, "xxxxx")
	}
	// pgx lists each failed attempt on its own line; keep log lines whole.
	return strings.ReplaceAll(strings.ReplaceAll(msg, "\n\t", "; "), "\n", " ")
}

func (e *redactedError) Unwrap() error { return e.err }

// Error wraps err so that secret never shows in its message.
func Error(err error, secret string) error {
	if err == nil {
		return nil
	}
	return &redactedError{err: err, secret: secret}
}

// URLPassword returns the password of a postgres:// URL, or "" when it has
// none or the URL does not parse.
func URLPassword(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return ""
	}
	p, _ := u.User.Password()
	return p
}

// URL renders raw with its password and any password query parameter
// masked; a string that does not parse as a URL is hidden entirely.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return "value hidden"
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
	}
	q := u.Query()
	changed := false
	for k := range q {
		if lk := strings.ToLower(k); lk == "password" || lk == "sslpassword" {
			q.Set(k, "xxxxx")
			changed = true
		}
	}
	if changed {
		u.RawQuery = q.Encode()
	}
	return u.String()
}
