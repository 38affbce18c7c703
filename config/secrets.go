package config

import (
	"net/url"
	"slices"
	"strings"
	"time"
)

// redactedValue stands in for a hidden secret in Redacted.
const redactedValue = "[redacted]"

// Secrets returns every configured secret value (API key, bot tokens,
// signing secret, the whole database and Redis URLs, and the values of
// MCP servers' env and headers and custom tools' env), non-empty only, for
// scrubbing logs, tool output and replies.
func (c *Config) Secrets() []string {
	var out []string
	for _, f := range fields() {
		if !f.secret {
			continue
		}
		if s, ok := f.value(c).(string); ok && s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	add := func(v string) {
		if v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	for _, a := range c.Agents {
		add(a.APIKey)
	}
	for _, m := range c.Models {
		add(m.APIKey)
	}
	// Values given to MCP servers and custom tools are credentials as a rule.
	for _, s := range c.MCP.Servers {
		for _, v := range s.Env {
			add(v)
		}
		for _, v := range s.Headers {
			add(v)
		}
	}
	for _, t := range c.CustomTools {
		for _, v := range t.Env {
			add(v)
		}
	}
	for _, b := range c.CredentialedExec {
		for _, v := range b.Env {
			add(v)
		}
	}
	return out
}

// Redacted returns every key with its value, secrets hidden: tokens and keys
// become "[redacted]", URLs keep their shape with the password masked.
// Durations are rendered as strings. It is meant for `doctor` output.
func (c *Config) Redacted() map[string]any {
	out := map[string]any{}
	for _, f := range fields() {
		val := f.value(c)
		switch v := val.(type) {
		case []string:
			val = slices.Clone(v)
		case time.Duration:
			val = v.String()
		}
		if f.secret {
			if s, _ := val.(string); s != "" {
				val = redactedValue
				if strings.HasSuffix(f.key, ".url") {
					val = redactURL(s)
				}
			}
		}
		out[f.key] = val
	}
	models := slices.Clone(c.Models)
	for i := range models {
		if models[i].APIKey != "" {
			models[i].APIKey = redactedValue
		}
	}
	out["models"] = models
	return out
}

// redactURL keeps a URL's scheme, user, host and path but masks its
// password and any password-like query values; an unparseable value is
// hidden entirely.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Opaque != "" {
		return redactedValue
	}
	q := u.Query()
	for k := range q {
		lk := strings.ToLower(k)
		if strings.Contains(lk, "pass") || strings.Contains(lk, "secret") || strings.Contains(lk, "token") || strings.Contains(lk, "key") {
			q.Set(k, "xxxxx")
		}
	}
	u.RawQuery = q.Encode()
	return u.Redacted()
}
