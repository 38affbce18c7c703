package config

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestSecrets(t *testing.T) {
	c := Defaults()
	if got := c.Secrets(); len(got) != 0 {
		t.Errorf("Secrets of defaults = %q, want none", got)
	}
	c = valid()
	c.Slack.BotToken = "xoxb-bot"
	c.Slack.AppToken = "xapp-app"
	c.Slack.SigningSecret = "signing"
	c.Discord.Token = "discord-token"
	c.LLM.Model = "gpt-not-secret"
	got := c.Secrets()
	want := []string{
		c.Database.URL, c.Redis.URL, c.LLM.APIKey, c.Telegram.Token,
		"xoxb-bot", "xapp-app", "signing", "discord-token",
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("Secrets = %q\nwant %q", got, want)
	}
}

func TestSecretsSkipsEmptyAndDuplicates(t *testing.T) {
	c := Defaults()
	c.Slack.BotToken = "same-token"
	c.Discord.Token = "same-token"
	if got := c.Secrets(); !slices.Equal(got, []string{"same-token"}) {
		t.Errorf("Secrets = %q, want [same-token]", got)
	}
}

func TestRedactedHidesSecrets(t *testing.T) {
	c := valid()
	c.Database.URL = "postgres://sb:pw-db-123@db:5432/sb?password=pw-q-123&sslmode=disable"
	r := c.Redacted()
	if len(r) != len(Keys()) {
		t.Errorf("Redacted has %d keys, want %d (every key)", len(r), len(Keys()))
	}
	dump := fmt.Sprint(r)
	for _, s := range c.Secrets() {
		if strings.Contains(dump, s) {
			t.Errorf("Redacted reveals %q:\n%s", s, dump)
		}
	}
	for _, pw := range []string{"pw-db-123", "pw-q-123", "pw-redis-123"} {
		if strings.Contains(dump, pw) {
			t.Errorf("Redacted reveals password %q", pw)
		}
	}
	if got := r["llm.api_key"]; got != "[redacted]" {
		t.Errorf("llm.api_key = %v, want [redacted]", got)
	}
	if got, _ := r["database.url"].(string); !strings.HasPrefix(got, "postgres://sb:") || !strings.Contains(got, "@db:5432/sb") {
		t.Errorf("database.url = %q, want its shape kept (scheme, user, host, path)", got)
	}
	if got := r["llm.model"]; got != c.LLM.Model {
		t.Errorf("llm.model = %v, want %q unchanged", got, c.LLM.Model)
	}
	if got := r["approvals.timeout"]; got != "2m0s" {
		t.Errorf("approvals.timeout = %v, want 2m0s", got)
	}
	if got := r["slack.bot_token"]; got != "" {
		t.Errorf("unset slack.bot_token = %v, want empty", got)
	}
}
