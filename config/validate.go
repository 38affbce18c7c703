package config

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Problems lists everything wrong with a configuration. Its message has one
// problem per line.
type Problems []string

// Error joins the problems, one per line.
func (p Problems) Error() string { return strings.Join(p, "\n") }

// platforms are the channel platforms identities may name.
var platforms = []string{"telegram", "slack", "discord", "console"}

var agentName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// Validate checks every setting and returns Problems listing all that are
// wrong, or nil.
func (c *Config) Validate() error {
	var p Problems
	add := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }
	c.validateServices(add)
	c.validateLLM(add)
	c.validateChannels(add)
	c.validateAccess(add)
	c.validateExec(add)
	c.validateAgent(add)
	c.validateTools(add)
	c.validateFeatures(add)
	c.validateAgents(add)
	c.validateMCP(add)
	c.validateCustomTools(add)
	c.validateCredentialed(add)
	checkApprovalClasses(add, "tools.approvals", c.Tools.Approvals)
	c.validateLog(add)
	c.validateApprovalRules(add)
	c.validateBudgets(add)
	c.validateRetention(add)
	c.validateSkills(add)
	if len(p) == 0 {
		return nil
	}
	slices.Sort(p)
	return p
}

// oneOf adds a problem when got, the value of key, is not one of allowed.
func oneOf(add func(string, ...any), key, got string, allowed ...string) {
	if !slices.Contains(allowed, got) {
		add("%s must be %s (got %q)", key, orList(allowed), got)
	}
}

// validateServices checks the data directory, PostgreSQL, Redis and the
// HTTP listener.
func (c *Config) validateServices(add func(string, ...any)) {
	if strings.TrimSpace(c.DataDir) == "" {
		add("data_dir must not be empty (e.g. ./data)")
	}
	checkServiceURL(add, "database.url", c.Database.URL, "postgres://user:password@host:5432/db", "postgres", "postgresql")
	if c.Database.MaxConns < 1 || c.Database.MaxConns > 500 {
		add("database.max_conns must be between 1 and 500 (got %d); 16 suits most deployments", c.Database.MaxConns)
	}
	checkServiceURL(add, "redis.url", c.Redis.URL, "redis://:password@host:6379/0", "redis", "rediss", "unix")
	checkListen(add, c.HTTP.Listen)
	checkPublicURL(add, c.HTTP.PublicURL)
}

// checkPublicURL checks http.public_url: an absolute http(s) URL with a
// host and nothing after its path, since links are made by appending to it.
func checkPublicURL(add func(string, ...any), raw string) {
	if raw == "" {
		return
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		add("http.public_url must be an absolute http:// or https:// URL with a host and no user, query or fragment, "+
			"the address people open (e.g. https://bot.example.com; got %q)", raw)
	}
}

// validateLLM checks the model provider's settings.
func (c *Config) validateLLM(add func(string, ...any)) {
	oneOf(add, "llm.provider", c.LLM.Provider, "openai", "anthropic")
	checkHTTPURL(add, "llm.base_url", c.LLM.BaseURL)
	if c.LLM.Timeout <= 0 {
		add("llm.timeout must be positive (e.g. 120s)")
	}
	if c.LLM.MaxTokens < 0 {
		add("llm.max_tokens must be 0 (provider default) or more (got %d)", c.LLM.MaxTokens)
	}
	c.validateFallbacks(add)
	c.validateModels(add)
	c.validatePrices(add)
}

// validateChannels checks the chat platforms' settings.
func (c *Config) validateChannels(add func(string, ...any)) {
	checkHTTPURL(add, "telegram.api_url", c.Telegram.APIURL)
	if !slices.Contains([]string{"polling", "webhook"}, c.Telegram.Mode) {
		add("telegram.mode must be polling or webhook (got %q)", c.Telegram.Mode)
	}
	if c.Telegram.Mode == "webhook" && c.Telegram.Token != "" {
		checkWebhookURL(add, c.Telegram.WebhookURL, c.Telegram.APIURL)
		if c.Telegram.WebhookSecret == "" {
			add("telegram.mode webhook needs telegram.webhook_secret (1-256 characters of A-Z, a-z, 0-9, _ and -; e.g. `openssl rand -hex 32`)")
		}
	}
	checkHTTPURL(add, "slack.api_url", c.Slack.APIURL)
	checkHTTPURL(add, "discord.api_url", c.Discord.APIURL)
}

// validateAccess checks who may use the bot, who approves and where approvals go.
func (c *Config) validateAccess(add func(string, ...any)) {
	checkIdentities(add, "admins", c.Admins)
	oneOf(add, "access.mode", c.Access.Mode, "open", "allowlist", "request")
	checkIdentities(add, "access.allow", c.Access.Allow)
	checkIdentities(add, "approvals.approvers", c.Approvals.Approvers)
	if c.Approvals.Timeout <= 0 {
		add("approvals.timeout must be positive (e.g. 2m)")
	}
	if c.Approvals.Chat != "" {
		if msg := checkAddress(c.Approvals.Chat, "chat_id", "telegram:-1001234567890"); msg != "" {
			add("approvals.chat: %s", msg)
		}
	}
}

// validateExec checks how commands run and the rate limits.
func (c *Config) validateExec(add func(string, ...any)) {
	oneOf(add, "exec.approval", c.Exec.Approval, "ask", "deny", "allow")
	oneOf(add, "exec.sandbox", c.Exec.Sandbox, "auto", "bwrap", "none")

	if strings.TrimSpace(c.Exec.User) == "" {
		add("exec.user must name the account exec commands run as when switchboard runs as root (e.g. nobody)")
	}
	for key, val := range map[string]string{"ratelimit.user": c.RateLimit.User, "ratelimit.chat": c.RateLimit.Chat, "tools.rate_limit": c.Tools.RateLimit} {
		if _, _, _, err := ParseRate(val); err != nil {
			add("%s: %v", key, err)
		}
	}
}

// validateAgent checks the default agent.
func (c *Config) validateAgent(add func(string, ...any)) {
	if !agentName.MatchString(c.Agent.Name) {
		add("agent.name must be lower-case letters, digits, _ and - starting with a letter or digit (got %q)", c.Agent.Name)
	}
	if strings.TrimSpace(c.Agent.SystemPrompt) == "" {
		add("agent.system_prompt must not be empty")
	}
	if c.Agent.MaxIterations < 1 || c.Agent.MaxIterations > 200 {
		add("agent.max_iterations must be between 1 and 200 (got %d)", c.Agent.MaxIterations)
	}
	if c.Agent.ContextTokens < 1000 {
		add("agent.context_tokens must be at least 1000 (got %d); set it to your model's context window less what its replies need", c.Agent.ContextTokens)
	}
	if c.Agent.HistoryLimit < 1 {
		add("agent.history_limit must be at least 1 (got %d)", c.Agent.HistoryLimit)
	}
}

// validateTools checks the web and memory tools.
func (c *Config) validateTools(add func(string, ...any)) {
	if c.Tools.Web.Fetch.MaxBytes < 1 || c.Tools.Web.Fetch.MaxBytes > 100_000_000 {
		add("tools.web.fetch.max_bytes must be between 1 and 100000000 (got %d)", c.Tools.Web.Fetch.MaxBytes)
	}
	if c.Tools.Web.Fetch.Timeout <= 0 {
		add("tools.web.fetch.timeout must be positive (e.g. 20s)")
	}
	oneOf(add, "tools.web.search.provider", c.Tools.Web.Search.Provider, "duckduckgo", "brave", "searxng")
	checkHTTPURL(add, "tools.web.search.url", c.Tools.Web.Search.URL)
	if c.Tools.Web.Search.Provider == "searxng" && c.Tools.Web.Search.URL == "" {
		add("tools.web.search.url must be set to your SearXNG server for provider searxng (e.g. https://searx.example.org)")
	}
	if c.Tools.Web.Search.Provider == "brave" && c.Tools.Web.Search.APIKey == "" {
		add("tools.web.search.api_key must be set for provider brave (SWITCHBOARD_TOOLS_WEB_SEARCH_API_KEY)")
	}
	checkHTTPURL(add, "tools.memory.embedding.base_url", c.Tools.Memory.Embedding.BaseURL)
	if e := c.Tools.Memory.Embedding; e.Model != "" && e.BaseURL == "" && c.LLM.Provider != "openai" {
		add("tools.memory.embedding.base_url must be set: llm.provider %s has no OpenAI-compatible embeddings endpoint to borrow", c.LLM.Provider)
	}
}

// validateFeatures checks the subagent, handoff and media settings.
func (c *Config) validateFeatures(add func(string, ...any)) {
	if sa := c.Subagents; sa.MaxConcurrent < 1 || sa.MaxDepth < 1 || sa.MaxChildren < 1 || sa.ArchiveAfter < time.Minute {
		add("subagents: max_concurrent, max_depth and max_children must be at least 1 and archive_after at least 1m "+
			"(got %d, %d, %d, %s); the defaults are 8, 1, 5, 60m", sa.MaxConcurrent, sa.MaxDepth, sa.MaxChildren, sa.ArchiveAfter)
	}
	if c.Handoff.TTL < time.Minute {
		add("handoff.ttl must be at least 1m (got %s); 24h suits most teams", c.Handoff.TTL)
	}
	c.validateMedia(add)
}

// validateMedia checks the attachment limit and how long attachments are kept.
func (c *Config) validateMedia(add func(string, ...any)) {
	if c.Media.MaxBytes <= 0 {
		add("media.max_bytes must be more than 0 (got %d); the default 20000000 (20 MB) is Telegram's download limit for bots", c.Media.MaxBytes)
	}
	if c.Media.Keep < time.Hour {
		add("media.keep must be at least 1h (got %s): attachments must outlive the run that reads them; the default is 30d", c.Media.Keep)
	}
	for _, s := range []struct {
		key string
		m   MediaModel
	}{
		{"media.transcription", c.Media.Transcription}, {"media.vision", c.Media.Vision},
		{"media.images", c.Media.Images}, {"media.tts", c.Media.TTS.Service()},
	} {
		checkHTTPURL(add, s.key+".base_url", s.m.BaseURL)
		if s.m.Model != "" && s.m.BaseURL == "" && c.LLM.Provider != "openai" {
			add("%s.base_url must be set: llm.provider %s has no OpenAI-compatible endpoint to borrow (or leave %s.model empty to turn it off)",
				s.key, c.LLM.Provider, s.key)
		}
	}
	if c.Media.TTS.Model != "" && strings.TrimSpace(c.Media.TTS.Voice) == "" {
		add("media.tts.voice must name a voice of the speech server when media.tts.model is set (the default is alloy)")
	}
}

// validateLog checks the conversation queue mode and the log settings.
func (c *Config) validateLog(add func(string, ...any)) {
	oneOf(add, "conversation.queue", c.Conversation.Queue, "steer", "followup", "collect")
	oneOf(add, "log.level", c.Log.Level, "debug", "info", "warn", "error")
	oneOf(add, "log.format", c.Log.Format, "text", "json")
}

// checkServiceURL checks a database URL with one of schemes. The value is
// never quoted: it may hold a password.
func checkServiceURL(add func(string, ...any), key, raw, example string, schemes ...string) {
	if raw == "" {
		return
	}
	want := make([]string, len(schemes))
	for i, s := range schemes {
		want[i] = s + "://"
	}
	u, err := url.Parse(raw)
	if err != nil {
		add("%s is not a valid URL; expected %s URL like %s", key, orList(want), example)
		return
	}
	if !slices.Contains(schemes, strings.ToLower(u.Scheme)) {
		add("%s must be a %s URL like %s (got scheme %q)", key, orList(want), example, u.Scheme)
		return
	}
	if u.Scheme != "unix" && u.Host == "" && !strings.HasPrefix(u.Scheme, "postgres") {
		add("%s has no host; expected a URL like %s", key, example)
	}
}

// checkHTTPURL checks an optional http(s) API URL.
func checkHTTPURL(add func(string, ...any), key, raw string) {
	if raw == "" {
		return
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		shown := "(unparseable)"
		if err == nil {
			shown = strconv.Quote(u.Redacted())
		}
		add("%s must be an http:// or https:// URL with a host (got %s)", key, shown)
	}
}

// checkWebhookURL checks telegram.webhook_url for webhook mode. Telegram's
// own Bot API posts to https:// only; a local Bot API server
// (telegram-bot-api --local, set in telegram.api_url) also to http://.
func checkWebhookURL(add func(string, ...any), raw, apiURL string) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Scheme != "https" && u.Scheme != "http" {
		add("telegram.mode webhook needs telegram.webhook_url, the public https:// address Telegram posts to (…/webhooks/telegram; got %q)", raw)
		return
	}
	if u.Scheme == "http" && officialTelegramAPI(apiURL) {
		add("telegram.webhook_url must be https:// for Telegram's own Bot API (got %q); "+
			"http:// works only with a local Bot API server set in telegram.api_url", raw)
	}
}

// officialTelegramAPI reports whether apiURL (empty: the default) is
// Telegram's own Bot API rather than a local Bot API server. config imports
// no channel package, so channels/telegram's IsOfficialAPI, which checks
// the same when the channel is built, is not called here.
func officialTelegramAPI(apiURL string) bool {
	if strings.TrimSpace(apiURL) == "" {
		return true
	}
	u, err := url.Parse(apiURL)
	return err != nil || strings.EqualFold(u.Hostname(), "api.telegram.org")
}

// checkListen checks a host:port listen address.
func checkListen(add func(string, ...any), listen string) {
	_, port, err := net.SplitHostPort(listen)
	if err == nil {
		var n int
		n, err = strconv.Atoi(port)
		if err == nil && (n < 0 || n > 65535) {
			err = fmt.Errorf("port out of range")
		}
	}
	if err != nil {
		add("http.listen %q is not host:port (e.g. 127.0.0.1:8080 or :8080)", listen)
	}
}

// checkIdentities checks a list of platform:user_id identities.
func checkIdentities(add func(string, ...any), key string, ids []string) {
	for _, id := range ids {
		if msg := checkAddress(id, "user_id", "telegram:42"); msg != "" {
			add("%s: %s", key, msg)
		}
	}
}

// checkAddress checks "platform:id"; it returns what is wrong or "".
func checkAddress(s, idName, example string) string {
	platform, id, ok := strings.Cut(s, ":")
	if !ok || platform == "" || id == "" || strings.ContainsAny(s, " \t\r\n") {
		return fmt.Sprintf("%q is not platform:%s (e.g. %s)", s, idName, example)
	}
	if !slices.Contains(platforms, platform) {
		return fmt.Sprintf("%q names unknown platform %q (known: %s)", s, platform, strings.Join(platforms, ", "))
	}
	return ""
}

// orList renders ["a","b","c"] as "a, b or c".
func orList(items []string) string {
	if len(items) <= 1 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// AgentNames returns the default agent's name and every named agent's.
func (c *Config) AgentNames() []string {
	names := []string{c.Agent.Name}
	for _, a := range c.Agents {
		names = append(names, a.Name)
	}
	return names
}

// TeamNames returns the names of the configured teams.
func (c *Config) TeamNames() []string {
	names := make([]string, 0, len(c.Teams))
	for _, t := range c.Teams {
		names = append(names, t.Name)
	}
	return names
}

// validateAgents checks agents:, bindings: and the agents jobs name.
func (c *Config) validateAgents(add func(string, ...any)) {
	seen := map[string]bool{c.Agent.Name: true}
	for i, a := range c.Agents {
		where := fmt.Sprintf("agents[%d]", i)
		if a.Name != "" {
			where = fmt.Sprintf("agents[%s]", a.Name)
		}
		switch {
		case !agentName.MatchString(a.Name):
			add("%s.name must be lower-case letters, digits, _ and - starting with a letter or digit (got %q)", where, a.Name)
		case seen[a.Name]:
			add("%s: the name %q is used twice (agent.name and agents[].name must all differ)", where, a.Name)
		}
		seen[a.Name] = true
		if a.Provider != "" && !slices.Contains([]string{"openai", "anthropic"}, a.Provider) {
			add("%s.provider must be openai or anthropic (got %q); empty uses llm.provider", where, a.Provider)
		}
		checkHTTPURL(add, where+".base_url", a.BaseURL)
		if a.Kind != "" && a.Kind != "predefined" && a.Kind != "open" {
			add("%s.kind must be predefined or open (got %q)", where, a.Kind)
		}
		if a.MaxIterations < 0 || a.MaxIterations > 200 {
			add("%s.max_iterations must be between 1 and 200, or 0 for agent.max_iterations (got %d)", where, a.MaxIterations)
		}
		if a.ContextTokens != 0 && a.ContextTokens < 1000 {
			add("%s.context_tokens must be at least 1000, or 0 for agent.context_tokens (got %d)", where, a.ContextTokens)
		}
		if a.HistoryLimit < 0 {
			add("%s.history_limit must be at least 1, or 0 for agent.history_limit (got %d)", where, a.HistoryLimit)
		}
		checkApprovalClasses(add, where+".approvals", a.Approvals)
	}
	names := c.AgentNames()
	unknown := func(key, name string) {
		msg := fmt.Sprintf("%s names unknown agent %q; agents are %s", key, name, strings.Join(names, ", "))
		if s := suggest(name, names); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		add("%s", msg)
	}
	for i, b := range c.Bindings {
		key := fmt.Sprintf("bindings[%d]", i)
		if msg := checkAddress(strings.TrimSuffix(b.Chat, "*"), "chat_id", "slack:C0123ABC"); msg != "" && !strings.HasSuffix(b.Chat, ":*") {
			add("%s.chat: %s", key, msg)
		}
		if !slices.Contains(names, b.Agent) {
			unknown(key+".agent", b.Agent)
		}
	}
	for _, j := range c.Jobs {
		if j.Agent != "" && !slices.Contains(names, j.Agent) {
			unknown(fmt.Sprintf("jobs[%s].agent", j.Name), j.Agent)
		}
	}
	teams := map[string]bool{}
	for i, tm := range c.Teams {
		key := fmt.Sprintf("teams[%d]", i)
		switch {
		case !agentName.MatchString(tm.Name):
			add("%s.name must be lower-case letters, digits, _ and - (got %q)", key, tm.Name)
		case teams[tm.Name]:
			add("%s: team %q is defined twice", key, tm.Name)
		}
		teams[tm.Name] = true
		if !slices.Contains(names, tm.Lead) {
			unknown(key+".lead", tm.Lead)
		}
		if len(tm.Members) == 0 {
			add("%s.members must name at least one agent", key)
		}
		for _, m := range tm.Members {
			switch {
			case !slices.Contains(names, m):
				unknown(key+".members", m)
			case m == tm.Lead:
				add("%s.members: %q is the lead already", key, m)
			}
		}
	}
}

// checkApprovalClasses checks a side-effect class → allow|ask|deny map.
func checkApprovalClasses(add func(string, ...any), key string, m map[string]string) {
	classes := make([]string, 0, len(SideEffectClasses))
	for c := range SideEffectClasses {
		classes = append(classes, c)
	}
	slices.Sort(classes)
	for class, decision := range m {
		if _, ok := SideEffectClasses[class]; !ok {
			msg := fmt.Sprintf("%s.%s: unknown side-effect class; classes are %s", key, class, strings.Join(classes, ", "))
			if s := suggest(class, classes); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			add("%s", msg)
		}
		if decision != "allow" && decision != "ask" && decision != "deny" {
			add("%s.%s must be allow, ask or deny (got %q)", key, class, decision)
		}
	}
}
