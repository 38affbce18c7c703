package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// writeFile writes a config file into a fresh directory and returns its path.
func writeFile(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "switchboard.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatalf("write config: %v", err)
	}
	return path
}

func mustLoad(t *testing.T, opts LoadOptions) *Config {
	t.Helper()
	if opts.Environ == nil {
		opts.Environ = []string{}
	}
	c, err := Load(opts)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return c
}

func TestLoadDefaults(t *testing.T) {
	t.Chdir(t.TempDir()) // no ./switchboard.yaml here
	c := mustLoad(t, LoadOptions{})
	if c.File != "" {
		t.Errorf("File = %q, want none read", c.File)
	}
	checks := []struct {
		key       string
		got, want any
	}{
		{"data_dir", c.DataDir, "./data"},
		{"database.url", c.Database.URL, ""},
		{"database.max_conns", c.Database.MaxConns, 16},
		{"redis.url", c.Redis.URL, ""},
		{"http.listen", c.HTTP.Listen, "127.0.0.1:8080"},
		{"llm.provider", c.LLM.Provider, "openai"},
		{"llm.timeout", c.LLM.Timeout, 120 * time.Second},
		{"llm.max_tokens", c.LLM.MaxTokens, 0},
		{"telegram.api_url", c.Telegram.APIURL, "https://api.telegram.org"},
		{"telegram.mode", c.Telegram.Mode, "polling"},
		{"telegram.require_mention", c.Telegram.RequireMention, true},
		{"access.mode", c.Access.Mode, "request"},
		{"approvals.timeout", c.Approvals.Timeout, 2 * time.Minute},
		{"exec.approval", c.Exec.Approval, "ask"},
		{"ratelimit.user", c.RateLimit.User, "20/m"},
		{"ratelimit.chat", c.RateLimit.Chat, "60/m"},
		{"agent.name", c.Agent.Name, "default"},
		{"agent.max_iterations", c.Agent.MaxIterations, 20},
		{"agent.history_limit", c.Agent.HistoryLimit, 50},
		{"conversation.queue", c.Conversation.Queue, "steer"},
		{"conversation.stream", c.Conversation.Stream, true},
		{"log.level", c.Log.Level, "info"},
		{"log.format", c.Log.Format, "text"},
	}
	for _, ch := range checks {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("%s = %#v, want %#v", ch.key, ch.got, ch.want)
		}
	}
	if !strings.Contains(c.Agent.SystemPrompt, "team chat") {
		t.Errorf("agent.system_prompt = %q, want it to mention the team chat", c.Agent.SystemPrompt)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("defaults do not validate:\n%v", err)
	}
}

func TestLoadReadsSwitchboardYAMLInWorkingDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, DefaultFile), []byte("llm:\n  model: from-cwd\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	c := mustLoad(t, LoadOptions{})
	if c.LLM.Model != "from-cwd" || c.File != DefaultFile {
		t.Errorf("llm.model = %q, File = %q; want from-cwd read from %s", c.LLM.Model, c.File, DefaultFile)
	}
}

func TestLoadMissingNamedFile(t *testing.T) {
	name := filepath.Join(t.TempDir(), "nope.yaml")
	_, err := Load(LoadOptions{File: name, Environ: []string{}})
	if err == nil || !strings.Contains(err.Error(), "config file "+name+": no such file") {
		t.Errorf("Load(missing) error = %v, want \"config file %s: no such file\"", err, name)
	}
}

func TestLoadFileAndEnvPrecedence(t *testing.T) {
	file := writeFile(t, `
llm:
  provider: anthropic
  model: file-model
  api_key: file-key
telegram:
  token: file-token
admins: [telegram:1]
approvals:
  timeout: 5m
agent:
  max_iterations: 7
`)
	tests := []struct {
		name  string
		env   []string
		check func(c *Config) (got, want any)
	}{
		{"file over default", nil, func(c *Config) (any, any) { return c.LLM.Provider, "anthropic" }},
		{"env over file", []string{"SWITCHBOARD_LLM_MODEL=env-model"}, func(c *Config) (any, any) { return c.LLM.Model, "env-model" }},
		{"env over default", []string{"SWITCHBOARD_DATA_DIR=/var/lib/sb"}, func(c *Config) (any, any) { return c.DataDir, "/var/lib/sb" }},
		{"file kept without env", []string{"SWITCHBOARD_LLM_MODEL=env-model"}, func(c *Config) (any, any) { return c.LLM.APIKey, "file-key" }},
		{"empty env ignored", []string{"SWITCHBOARD_TELEGRAM_TOKEN="}, func(c *Config) (any, any) { return c.Telegram.Token, "file-token" }},
		{"env duration", []string{"SWITCHBOARD_APPROVALS_TIMEOUT=90s"}, func(c *Config) (any, any) { return c.Approvals.Timeout, 90 * time.Second }},
		{"file duration", nil, func(c *Config) (any, any) { return c.Approvals.Timeout, 5 * time.Minute }},
		{"env int", []string{"SWITCHBOARD_AGENT_MAX_ITERATIONS=9"}, func(c *Config) (any, any) { return c.Agent.MaxIterations, 9 }},
		{"env pool size", []string{"SWITCHBOARD_DATABASE_MAX_CONNS=40"}, func(c *Config) (any, any) { return c.Database.MaxConns, 40 }},
		{"env list over file", []string{"SWITCHBOARD_ADMINS=slack:U1,discord:2"}, func(c *Config) (any, any) { return c.Admins, []string{"slack:U1", "discord:2"} }},
		{"underscored key", []string{"SWITCHBOARD_SLACK_BOT_TOKEN=xoxb-1"}, func(c *Config) (any, any) { return c.Slack.BotToken, "xoxb-1" }},
		{"env public url", []string{"SWITCHBOARD_HTTP_PUBLIC_URL=https://sb.example.com"}, func(c *Config) (any, any) { return c.HTTP.PublicURL, "https://sb.example.com" }},
		{"other env ignored", []string{"HOME=/root", "PATH=/bin"}, func(c *Config) (any, any) { return c.LLM.Model, "file-model" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustLoad(t, LoadOptions{File: file, Environ: tt.env})
			if got, want := tt.check(c); !reflect.DeepEqual(got, want) {
				t.Errorf("got %#v, want %#v", got, want)
			}
		})
	}
}

func TestLoadLists(t *testing.T) {
	tests := []struct {
		name          string
		file          string
		env           []string
		wantAdmins    []string
		wantApprovers []string
	}{
		{
			name:          "env trims and drops empties; approvers default to admins",
			env:           []string{"SWITCHBOARD_ADMINS= telegram:1 , ,slack:U2,"},
			wantAdmins:    []string{"telegram:1", "slack:U2"},
			wantApprovers: []string{"telegram:1", "slack:U2"},
		},
		{
			name:          "explicit approvers",
			env:           []string{"SWITCHBOARD_ADMINS=telegram:1", "SWITCHBOARD_APPROVALS_APPROVERS=telegram:3"},
			wantAdmins:    []string{"telegram:1"},
			wantApprovers: []string{"telegram:3"},
		},
		{
			name:          "file list",
			file:          "admins:\n  - telegram:1\n  - discord:5\n",
			wantAdmins:    []string{"telegram:1", "discord:5"},
			wantApprovers: []string{"telegram:1", "discord:5"},
		},
		{
			name:          "file comma string",
			file:          "admins: \"telegram:1, discord:5\"\napprovals:\n  approvers: [slack:U9]\n",
			wantAdmins:    []string{"telegram:1", "discord:5"},
			wantApprovers: []string{"slack:U9"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := LoadOptions{Environ: tt.env}
			if tt.file != "" {
				opts.File = writeFile(t, tt.file)
			} else {
				t.Chdir(t.TempDir())
			}
			c := mustLoad(t, opts)
			if !slices.Equal(c.Admins, tt.wantAdmins) {
				t.Errorf("admins = %q, want %q", c.Admins, tt.wantAdmins)
			}
			if !slices.Equal(c.Approvals.Approvers, tt.wantApprovers) {
				t.Errorf("approvals.approvers = %q, want %q", c.Approvals.Approvers, tt.wantApprovers)
			}
		})
	}
}

// sample returns a distinct test value for f, as env text and as the
// value Load should produce.
func sample(f field) (text string, want any) {
	switch {
	case f.list:
		return "telegram:1,slack:" + f.key, []string{"telegram:1", "slack:" + f.key}
	case strings.HasSuffix(f.key, "timeout"):
		return "7s", 7 * time.Second
	}
	typ := reflect.TypeFor[Config]().FieldByIndex(f.index).Type
	if typ == reflect.TypeFor[time.Duration]() {
		return "7s", 7 * time.Second
	}
	switch typ.Kind() {
	case reflect.Int:
		return "7", 7
	case reflect.Int64:
		return "7", int64(7)
	case reflect.Bool:
		return "true", true
	}
	return "v-" + f.key, "v-" + f.key
}

func TestEveryKeyIsSettableFromEnv(t *testing.T) {
	t.Chdir(t.TempDir())
	var env []string
	for _, f := range fields() {
		if f.fileOnly {
			continue
		}
		text, _ := sample(f)
		env = append(env, f.env()+"="+text)
	}
	c := mustLoad(t, LoadOptions{Environ: env})
	for _, f := range fields() {
		if f.fileOnly {
			continue
		}
		_, want := sample(f)
		if got := f.value(c); !reflect.DeepEqual(got, want) {
			t.Errorf("%s via %s = %#v, want %#v", f.key, f.env(), got, want)
		}
	}
	if len(c.UnknownEnv) != 0 {
		t.Errorf("UnknownEnv = %q, want none", c.UnknownEnv)
	}
}

func TestEveryKeyIsSettableFromFile(t *testing.T) {
	doc := map[string]any{}
	for _, f := range fields() {
		if f.fileOnly {
			continue
		}
		_, want := sample(f)
		if d, ok := want.(time.Duration); ok {
			want = d.String()
		}
		m := doc
		parts := strings.Split(f.key, ".")
		for _, p := range parts[:len(parts)-1] {
			if _, ok := m[p]; !ok {
				m[p] = map[string]any{}
			}
			m = m[p].(map[string]any)
		}
		m[parts[len(parts)-1]] = want
	}
	body, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	c := mustLoad(t, LoadOptions{File: writeFile(t, string(body))})
	for _, f := range fields() {
		if f.fileOnly {
			continue
		}
		_, want := sample(f)
		if got := f.value(c); !reflect.DeepEqual(got, want) {
			t.Errorf("%s from file = %#v, want %#v", f.key, got, want)
		}
	}
}

func TestLoadRejectsUnknownFileKeys(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []string
	}{
		{"typo in section", "telgram:\n  token: abc\n", []string{"unknown key", "telgram.token (did you mean telegram.token?)"}},
		{"typo in leaf", "llm:\n  modle: gpt\n", []string{"llm.modle (did you mean llm.model?)"}},
		{"several", "foo: 1\nllm:\n  modle: gpt\n", []string{"unknown key foo\n", "unknown key llm.modle (did you mean llm.model?)"}},
		{"map under a leaf", "data_dir:\n  x: 1\n", []string{"data_dir.x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := writeFile(t, tt.body)
			_, err := Load(LoadOptions{File: file, Environ: []string{}})
			if err == nil {
				t.Fatal("Load: error = nil, want unknown key error")
			}
			for _, w := range append(tt.want, file) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestLoadAcceptsEmptySections(t *testing.T) {
	c := mustLoad(t, LoadOptions{File: writeFile(t, "telegram:\nslack: {}\n# only a comment\n")})
	if c.Telegram.Mode != "polling" {
		t.Errorf("telegram.mode = %q, want default polling under an empty section", c.Telegram.Mode)
	}
}

func TestLoadMalformedYAMLNamesFileAndLine(t *testing.T) {
	file := writeFile(t, "llm:\n  model: a\n   provider: b\n")
	_, err := Load(LoadOptions{File: file, Environ: []string{}})
	if err == nil {
		t.Fatal("Load: error = nil, want YAML error")
	}
	for _, w := range []string{file, "line 3"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
}

func TestLoadRejectsBadDurations(t *testing.T) {
	tests := []struct {
		name, body string
		env        []string
		want       string
	}{
		{"number without unit in file", "approvals:\n  timeout: 120\n", nil, "no unit"},
		{"word in file", "llm:\n  timeout: soon\n", nil, "not a duration"},
		{"word in env", "", []string{"SWITCHBOARD_APPROVALS_TIMEOUT=soon"}, "not a duration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(LoadOptions{File: writeFile(t, tt.body), Environ: tt.env})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Load error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestLoadReportsUnknownEnv(t *testing.T) {
	t.Chdir(t.TempDir())
	c := mustLoad(t, LoadOptions{Environ: []string{"SWITCHBOARD_TELGRAM_TOKEN=x", "SWITCHBOARD_LLM_MODEL=m", "OTHER=1"}})
	if !slices.Equal(c.UnknownEnv, []string{"SWITCHBOARD_TELGRAM_TOKEN"}) {
		t.Errorf("UnknownEnv = %q, want [SWITCHBOARD_TELGRAM_TOKEN]", c.UnknownEnv)
	}
	if c.Telegram.Token != "" {
		t.Errorf("telegram.token = %q, want unset by a misspelt variable", c.Telegram.Token)
	}
}

// TestLoadReportsEveryProblemAtOnce: unknown keys and bad values, in the
// file and in the environment, come back from one Load and Validate, one
// line each, and a bad value is not reported again as its zero value.
func TestLoadReportsEveryProblemAtOnce(t *testing.T) {
	file := writeFile(t, "telgram:\n  token: abc\nllm:\n  modle: gpt\n  timeout: soon\nlog:\n  level: loud\n")
	c, err := Load(LoadOptions{File: file, Environ: []string{"SWITCHBOARD_DATABASE_MAX_CONNS=many"}})
	if c == nil {
		t.Fatalf("Load returned no Config with its problems (%v): nothing left to validate", err)
	}
	var p Problems
	if !errors.As(err, &p) {
		t.Fatalf("Load error = %v, want Problems", err)
	}
	var v Problems
	if !errors.As(c.Validate(), &v) {
		t.Fatal("Validate found nothing, want log.level")
	}
	lines := strings.Split(append(p, v...).Error(), "\n")
	want := []string{
		"config file " + file + ": unknown key llm.modle (did you mean llm.model?)",
		"config file " + file + ": unknown key telgram.token (did you mean telegram.token?)",
		`database.max_conns: "many" is not a whole number (e.g. 16)`,
		`llm.timeout: "soon" is not a duration`,
		`log.level must be debug, info, warn or error (got "loud")`,
	}
	for _, w := range want {
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, w) }) {
			t.Errorf("no line starts with %q in:\n%s", w, strings.Join(lines, "\n"))
		}
	}
	if len(lines) != len(want) {
		t.Errorf("%d lines, want %d (each problem once):\n%s", len(lines), len(want), strings.Join(lines, "\n"))
	}
}

// TestLoadNamesBadValuesInFileWords: a value that does not fit its key is
// described as the file writes it ("a whole number"), not in Go's types.
func TestLoadNamesBadValuesInFileWords(t *testing.T) {
	tests := []struct{ body, want string }{
		{"database:\n  max_conns: many\n", `database.max_conns: "many" is not a whole number (e.g. 16)`},
		{"data_dir: [a, b]\n", "data_dir: a list is not a single value"},
		{"admins:\n  x: 1\n", "admins[0]: a section of keys is not a single value"},
	}
	for _, tt := range tests {
		_, err := Load(LoadOptions{File: writeFile(t, tt.body), Environ: []string{}})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: Load error = %v, want it to contain %q", tt.body, err, tt.want)
		}
	}
}
