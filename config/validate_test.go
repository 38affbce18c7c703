package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// valid returns a fully set, valid configuration.
func valid() Config {
	c := Defaults()
	c.Database.URL = "postgres://sb:pw-db-123@db:5432/sb?sslmode=disable"
	c.Redis.URL = "rediss://:pw-redis-123@cache:6380/1"
	c.LLM.BaseURL = "http://127.0.0.1:11434/v1"
	c.LLM.APIKey = "sk-test-key"
	c.Telegram.Token = "123:abc"
	c.Slack.APIURL = "https://slack.example/api/"
	c.Discord.APIURL = "https://discord.example/api"
	c.Admins = []string{"telegram:42", "slack:U01"}
	c.Access.Allow = []string{"discord:7", "console:me"}
	c.Approvals.Approvers = []string{"telegram:42"}
	c.Approvals.Chat = "telegram:-100123"
	c.RateLimit.User = "off"
	c.RateLimit.Chat = "5/s"
	c.HTTP.PublicURL = "https://bot.example.com/sb"
	return c
}

func TestValidateAcceptsValidConfigs(t *testing.T) {
	for name, c := range map[string]Config{"defaults": Defaults(), "full": valid()} {
		if err := c.Validate(); err != nil {
			t.Errorf("%s: Validate = %v, want nil", name, err)
		}
	}
}

func TestValidateMessages(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(c *Config)
		want   string
	}{
		{"data_dir", func(c *Config) { c.DataDir = " " }, "data_dir must not be empty"},
		{"database scheme", func(c *Config) { c.Database.URL = "mysql://u:pw-db-123@h/db" }, `database.url must be a postgres:// or postgresql:// URL like postgres://user:password@host:5432/db (got scheme "mysql")`},
		{"database unparseable", func(c *Config) { c.Database.URL = "postgres://u:pw-db-123@h:port/db" }, "database.url is not a valid URL"},
		{"database.max_conns low", func(c *Config) { c.Database.MaxConns = 0 }, "database.max_conns must be between 1 and 500 (got 0)"},
		{"database.max_conns high", func(c *Config) { c.Database.MaxConns = 501 }, "database.max_conns must be between 1 and 500 (got 501)"},
		{"redis scheme", func(c *Config) { c.Redis.URL = "http://:pw-redis-123@h:6379" }, `redis.url must be a redis://, rediss:// or unix:// URL`},
		{"redis host", func(c *Config) { c.Redis.URL = "redis:///0" }, "redis.url has no host"},
		{"http.listen", func(c *Config) { c.HTTP.Listen = "x" }, `http.listen "x" is not host:port`},
		{"http.listen port", func(c *Config) { c.HTTP.Listen = "127.0.0.1:99999" }, `http.listen "127.0.0.1:99999" is not host:port`},
		{"llm.provider", func(c *Config) { c.LLM.Provider = "x" }, `llm.provider must be openai or anthropic (got "x")`},
		{"llm.base_url", func(c *Config) { c.LLM.BaseURL = "localhost:11434" }, "llm.base_url must be an http:// or https:// URL with a host"},
		{"llm.timeout", func(c *Config) { c.LLM.Timeout = 0 }, "llm.timeout must be positive"},
		{"llm.max_tokens", func(c *Config) { c.LLM.MaxTokens = -1 }, "llm.max_tokens must be 0 (provider default) or more (got -1)"},
		{"llm.fallbacks empty", func(c *Config) { c.LLM.Model, c.LLM.Fallbacks = "a", []string{"b", " "} }, "llm.fallbacks[1] is empty"},
		{"llm.fallbacks the model", func(c *Config) { c.LLM.Model, c.LLM.Fallbacks = "a", []string{"a"} }, `llm.fallbacks[0] is "a", llm.model itself`},
		{"llm.fallbacks twice", func(c *Config) { c.LLM.Model, c.LLM.Fallbacks = "a", []string{"b", "b"} }, `llm.fallbacks[1]: "b" is listed twice`},
		{"telegram.mode", func(c *Config) { c.Telegram.Mode = "push" }, `telegram.mode must be polling or webhook (got "push")`},
		{"telegram.webhook_url", func(c *Config) {
			c.Telegram.Token, c.Telegram.Mode, c.Telegram.WebhookSecret = "1:x", "webhook", "s"
			c.Telegram.WebhookURL = "ftp://bot.example.com/webhooks/telegram"
		}, "telegram.mode webhook needs telegram.webhook_url"},
		{"telegram.webhook_url http with Telegram's own API", func(c *Config) {
			c.Telegram.Token, c.Telegram.Mode, c.Telegram.WebhookSecret = "1:x", "webhook", "s"
			c.Telegram.WebhookURL = "http://bot.example.com/webhooks/telegram"
		}, "telegram.webhook_url must be https:// for Telegram's own Bot API " +
			`(got "http://bot.example.com/webhooks/telegram"); http:// works only with a local Bot API server set in telegram.api_url`},
		{"telegram.webhook_secret", func(c *Config) {
			c.Telegram.Token, c.Telegram.Mode = "1:x", "webhook"
			c.Telegram.WebhookURL = "https://bot.example.com/webhooks/telegram"
		}, "telegram.mode webhook needs telegram.webhook_secret"},
		{"telegram.api_url", func(c *Config) { c.Telegram.APIURL = "ftp://x" }, "telegram.api_url must be an http:// or https:// URL"},
		{"slack.api_url", func(c *Config) { c.Slack.APIURL = "nope" }, "slack.api_url must be an http:// or https:// URL"},
		{"discord.api_url", func(c *Config) { c.Discord.APIURL = "nope" }, "discord.api_url must be an http:// or https:// URL"},
		{"http.public_url relative", func(c *Config) { c.HTTP.PublicURL = "bot.example.com" }, `http.public_url must be an absolute http:// or https:// URL`},
		{"http.public_url scheme", func(c *Config) { c.HTTP.PublicURL = "ftp://bot.example.com" }, `http.public_url must be an absolute http:// or https:// URL`},
		{"http.public_url query", func(c *Config) { c.HTTP.PublicURL = "https://bot.example.com/?a=1" }, `(e.g. https://bot.example.com; got "https://bot.example.com/?a=1")`},
		{"admins shape", func(c *Config) { c.Admins = []string{"42"} }, `admins: "42" is not platform:user_id (e.g. telegram:42)`},
		{"admins empty id", func(c *Config) { c.Admins = []string{"telegram:"} }, `admins: "telegram:" is not platform:user_id`},
		{"admins platform", func(c *Config) { c.Admins = []string{"tg:42"} }, `admins: "tg:42" names unknown platform "tg" (known: telegram, slack, discord, console)`},
		{"access.mode", func(c *Config) { c.Access.Mode = "opne" }, `access.mode must be open, allowlist or request (got "opne")`},
		{"access.allow", func(c *Config) { c.Access.Allow = []string{"bob"} }, `access.allow: "bob" is not platform:user_id`},
		{"approvers", func(c *Config) { c.Approvals.Approvers = []string{"irc:x"} }, `approvals.approvers: "irc:x" names unknown platform "irc"`},
		{"approvals.timeout", func(c *Config) { c.Approvals.Timeout = -time.Second }, "approvals.timeout must be positive"},
		{"approvals.chat", func(c *Config) { c.Approvals.Chat = "-100123" }, `approvals.chat: "-100123" is not platform:chat_id (e.g. telegram:-1001234567890)`},
		{"exec.approval", func(c *Config) { c.Exec.Approval = "maybe" }, `exec.approval must be ask, deny or allow (got "maybe")`},
		{"ratelimit.user", func(c *Config) { c.RateLimit.User = "20 per minute" }, `ratelimit.user: "20 per minute" is not N/s, N/m, N/h or off`},
		{"ratelimit.chat", func(c *Config) { c.RateLimit.Chat = "0/m" }, "ratelimit.chat: the count must be at least 1 (use off to disable the limit)"},
		{"agent.name", func(c *Config) { c.Agent.Name = "My Agent" }, `agent.name must be lower-case letters, digits, _ and - starting with a letter or digit (got "My Agent")`},
		{"agent.name leading dash", func(c *Config) { c.Agent.Name = "-a" }, `agent.name must be`},
		{"agent.system_prompt", func(c *Config) { c.Agent.SystemPrompt = "" }, "agent.system_prompt must not be empty"},
		{"agent.max_iterations low", func(c *Config) { c.Agent.MaxIterations = 0 }, "agent.max_iterations must be between 1 and 200 (got 0)"},
		{"agent.max_iterations high", func(c *Config) { c.Agent.MaxIterations = 201 }, "agent.max_iterations must be between 1 and 200 (got 201)"},
		{"agent.history_limit", func(c *Config) { c.Agent.HistoryLimit = 0 }, "agent.history_limit must be at least 1 (got 0)"},
		{"log.level", func(c *Config) { c.Log.Level = "trace" }, `log.level must be debug, info, warn or error (got "trace")`},
		{"log.format", func(c *Config) { c.Log.Format = "xml" }, `log.format must be text or json (got "xml")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := valid()
			tt.mutate(&c)
			err := c.Validate()
			var p Problems
			if !errors.As(err, &p) {
				t.Fatalf("Validate = %v, want Problems", err)
			}
			if len(p) != 1 {
				t.Fatalf("got %d problems, want 1:\n%v", len(p), err)
			}
			if !strings.Contains(p[0], tt.want) {
				t.Errorf("problem = %q\nwant it to contain %q", p[0], tt.want)
			}
			for _, secret := range []string{"pw-db-123", "pw-redis-123"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("problem %q reveals a password", err)
				}
			}
		})
	}
}

// TestValidateWebhookOverHTTPWithLocalBotAPI: a local Bot API server
// (telegram-bot-api --local) posts to http:// on any port, so with
// telegram.api_url pointing at one an http:// webhook_url is valid.
func TestValidateWebhookOverHTTPWithLocalBotAPI(t *testing.T) {
	for _, api := range []string{"http://127.0.0.1:8081", "https://tg-api.internal.example"} {
		c := valid()
		c.Telegram.Mode, c.Telegram.WebhookSecret = "webhook", "s"
		c.Telegram.APIURL = api
		c.Telegram.WebhookURL = "http://switchboard.internal:9000/webhooks/telegram"
		if err := c.Validate(); err != nil {
			t.Errorf("api_url %s, http:// webhook_url: Validate = %v, want nil", api, err)
		}
	}
	for _, api := range []string{"", "https://api.telegram.org", "https://API.telegram.org/"} {
		c := valid()
		c.Telegram.Mode, c.Telegram.WebhookSecret = "webhook", "s"
		c.Telegram.APIURL = api
		c.Telegram.WebhookURL = "http://switchboard.internal:9000/webhooks/telegram"
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "must be https:// for Telegram's own Bot API") {
			t.Errorf("api_url %q, http:// webhook_url: Validate = %v, want it refused", api, err)
		}
	}
}

func TestValidateCollectsEveryProblemOnePerLine(t *testing.T) {
	c := valid()
	c.Access.Mode = "opne"
	c.LLM.Provider = "x"
	c.Admins = []string{"42", "telegram:1", "tg:2"}
	err := c.Validate()
	if err == nil {
		t.Fatal("Validate = nil")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 4 {
		t.Fatalf("got %d lines, want 4 (one per problem):\n%v", len(lines), err)
	}
	for _, want := range []string{"access.mode", "llm.provider", `"42"`, `"tg:2"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %s:\n%v", want, err)
		}
	}
}
