package scrub

import (
	"strings"
	"testing"
)

func TestScrubberRedactsConfiguredValues(t *testing.T) {
	s := New("plain-words-not-a-pattern", "postgres://app:s3cr3t-pass@db:5432/x", "short")
	cases := []struct{ in, leak string }{
		{"the key is plain-words-not-a-pattern, ok?", "plain-words-not-a-pattern"},
		{"dsn=postgres://app:s3cr3t-pass@db:5432/x", "s3cr3t-pass"},
		{"password alone: s3cr3t-pass", "s3cr3t-pass"},
		{"url-encoded: plain-words-not-a-pattern", "plain-words"},
	}
	for _, c := range cases {
		got := s.Scrub(c.in)
		if strings.Contains(got, c.leak) {
			t.Errorf("Scrub(%q) = %q still contains %q", c.in, got, c.leak)
		}
		if !strings.Contains(got, Redacted) {
			t.Errorf("Scrub(%q) = %q has no %s", c.in, got, Redacted)
		}
	}
	// Values shorter than six characters would shred ordinary text.
	if got := s.Scrub("a short note"); got != "a short note" {
		t.Errorf("short value scrubbed: %q", got)
	}
}

func TestScrubberStaticPatterns(t *testing.T) {
	s := New()
	leaks := []string{
		"sk-abcdefghijklmnopqrstuvwxyz123456",
		"sk-ant-api03-abcdefghijklmnopqrstuvwx",
		"ghp_abcdefghijklmnopqrstuvwxyz0123456789",
		"AKIAABCDEFGHIJKLMNOP",
		"xoxb-1234567890-abcdefghij",
		"7012345678:AAHk3vQ9xYz_TestTokenValue-abcdefghij12",
		"redis://:pw@cache:6379/0",
		"API_KEY=abc123def456",
		"password=hunter2hunter2",
		"Authorization: Bearer abcdef123456",
		strings.Repeat("ab", 40),
	}
	for _, l := range leaks {
		got := s.Scrub("value " + l + " end")
		if strings.Contains(got, l) {
			t.Errorf("pattern missed %q: %q", l, got)
		}
	}
	// Ordinary words near the keywords survive.
	for _, ok := range []string{"the token limit was exceeded", "reset your password in settings", "tokens: 1234"} {
		if got := s.Scrub(ok); got != ok {
			t.Errorf("Scrub(%q) = %q, changed harmless text", ok, got)
		}
	}
	if got := s.Scrub("password=hunter2hunter2"); got != "password="+Redacted {
		t.Errorf("key=value keeps the key: got %q", got)
	}
}

func TestScrubberAddLater(t *testing.T) {
	s := New()
	if got := s.Scrub("abcdefgh"); got != "abcdefgh" {
		t.Fatalf("scrubbed before Add: %q", got)
	}
	s.Add("abcdefgh")
	if got := s.Scrub("x abcdefgh y"); got != "x "+Redacted+" y" {
		t.Fatalf("after Add: %q", got)
	}
}

// TestScrubKeyValueKeepsProseRedactsValues: after "token: " a sentence
// going on ("check telegram.token") is kept, while a value at the end of
// its line, a word that is not one of advice (a password of letters), one
// with digits, mixed case or symbols, one after "=" or "Bearer ", or a
// quoted one is still redacted.
func TestScrubKeyValueKeepsProseRedactsValues(t *testing.T) {
	s := New()
	for _, ok := range []string{
		"Telegram rejected the token: check telegram.token (from @BotFather)",
		"api_key: SWITCHBOARD_LLM_API_KEY is not set",
		"the webhook secret: telegram.webhook_secret must match",
		"check telegram.token: telegram: getMe failed",
		"Your password: Change it in settings",
	} {
		if got := s.Scrub(ok); got != ok {
			t.Errorf("Scrub(%q) = %q, changed prose", ok, got)
		}
	}
	for in, want := range map[string]string{
		"password: hunter":                        "password: " + Redacted,
		"password: correcthorse\nuser: bob":       "password: " + Redacted + "\nuser: bob",
		"token: abc123def and more":               "token: " + Redacted + " and more",
		"token: AbCdEfGh and more":                "token: " + Redacted + " and more",
		"token: deadbeefcafe user=bob":            "token: " + Redacted + " user=bob",
		"password: letmein and more":              "password: " + Redacted + " and more",
		"password=letmein and more":               "password=" + Redacted + " and more",
		"token:letmein and more":                  "token:" + Redacted + " and more",
		"Authorization: Bearer abcdefghij please": "Authorization: Bearer " + Redacted + " please",
		`secret: "letmein" was set`:               "secret: " + Redacted + " was set",
		"api_key: sk_live_abcdef more":            "api_key: " + Redacted + " more",
	} {
		if got := s.Scrub(in); got != want {
			t.Errorf("Scrub(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestScrubDatabaseURLsOnlyWithCredentials: a database URL with a password
// (or a user, or a password parameter) is redacted whole; one without any
// credential, or with the placeholder of an example, is left as written.
func TestScrubDatabaseURLsOnlyWithCredentials(t *testing.T) {
	s := New()
	for _, ok := range []string{
		"set redis.url (e.g. redis://127.0.0.1:6379/0) or use the in-process Redis",
		"expected redis://[user:password@]host:port[/db]",
		"a URL like postgres://user:password@host:5432/db",
		"postgres://app:${DB_PASSWORD}@db:5432/app",
	} {
		if got := s.Scrub(ok); got != ok {
			t.Errorf("Scrub(%q) = %q, changed a URL without credentials", ok, got)
		}
	}
	for _, leak := range []string{
		"postgres://app:s3cr3t-pass@db:5432/x",
		"postgresql://app@db/x",
		"postgres://db/x?sslmode=require&password=s3cr3t",
		"mongodb+srv://u:p4ss@cluster0.example.net/db",
		"rediss://:pw@cache:6380/1",
	} {
		if got := s.Scrub("dsn " + leak + " end"); got != "dsn "+Redacted+" end" {
			t.Errorf("Scrub(%q) = %q, want it redacted whole", leak, got)
		}
	}
}
