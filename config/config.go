// Package config loads switchboard's settings from a YAML file and
// SWITCHBOARD_* environment variables and checks them.
package config

import "time"

// Config is switchboard's whole configuration. Every field's mapstructure
// tag is its key in the YAML file; the environment variable is SWITCHBOARD_
// plus the dotted key path upper-cased with "." → "_". Fields tagged
// secret:"true" are credentials: Secrets returns them and Redacted hides them.
type Config struct {
	// Replica names this process among several sharing one database: in
	// /readyz, in the service.instance.id of its traces and, when set, in
	// every log line. Default: the host name (a Kubernetes pod's name).
	Replica string `mapstructure:"replica"`
	// DataDir holds the embedded Postgres data and workspaces.
	DataDir string `mapstructure:"data_dir"`
	// Database is the durable store.
	Database Database `mapstructure:"database"`
	// Redis is the fast shared state.
	Redis Redis `mapstructure:"redis"`
	// HTTP serves health, metrics and webhooks.
	HTTP HTTP `mapstructure:"http"`
	// LLM is the model provider.
	LLM LLM `mapstructure:"llm"`
	// Models are the models admins may switch a chat to with /model (not
	// settable by env).
	Models []ModelEntry `mapstructure:"models"`
	// Telegram is the Telegram channel.
	Telegram Telegram `mapstructure:"telegram"`
	// Slack is the Slack channel.
	Slack Slack `mapstructure:"slack"`
	// Discord is the Discord channel.
	Discord Discord `mapstructure:"discord"`
	// Admins are platform:user_id identities who approve access requests.
	Admins []string `mapstructure:"admins"`
	// Access says who may talk to agents.
	Access Access `mapstructure:"access"`
	// Approvals configures approval buttons.
	Approvals Approvals `mapstructure:"approvals"`
	// Exec gates the exec tool.
	Exec Exec `mapstructure:"exec"`
	// Tools configures every tool.
	Tools Tools `mapstructure:"tools"`
	// RateLimit caps how often people may talk to agents.
	RateLimit RateLimit `mapstructure:"ratelimit"`
	// Agent is the default agent.
	Agent Agent `mapstructure:"agent"`
	// Agents are more named agents (not settable by env).
	Agents []NamedAgent `mapstructure:"agents"`
	// Bindings choose the agent per chat; first match wins, else Agent.
	Bindings []Binding `mapstructure:"bindings"`
	// Teams group agents under a lead (not settable by env).
	Teams []Team `mapstructure:"teams"`
	// Handoff configures handing conversations between agents.
	Handoff Handoff `mapstructure:"handoff"`
	// Subagents bounds the subagents agents spawn.
	Subagents Subagents `mapstructure:"subagents"`
	// Conversation says how a chat's messages are taken in.
	Conversation Conversation `mapstructure:"conversation"`
	// Media bounds and keeps the attachments people send.
	Media Media `mapstructure:"media"`
	// Log configures logging.
	Log Log `mapstructure:"log"`
	// Jobs are scheduled agent jobs defined in the file (not settable by env).
	Jobs []Job `mapstructure:"jobs"`
	// MCP lists the MCP servers whose tools agents may use.
	MCP MCP `mapstructure:"mcp"`
	// CustomTools are shell-command tools defined by the operator.
	CustomTools []CustomTool `mapstructure:"custom_tools"`
	// CredentialedExec lists the CLIs credentialed_exec may run.
	CredentialedExec []CredentialedBinary `mapstructure:"credentialed_exec"`
	// SecretsKey holds the key that encrypts secrets kept in Postgres.
	SecretsKey SecretsKey `mapstructure:"secrets"`
	// Budgets cap spending per user, chat, agent, job or in all, checked
	// before every model call (not settable by env).
	Budgets []Budget `mapstructure:"budgets"`
	// Retention says how long messages, the audit log and media are kept.
	Retention Retention `mapstructure:"retention"`
	// Skills are the skills agents may find and use.
	Skills Skills `mapstructure:"skills"`
	// Knowledge configures the knowledge graph of memory documents.
	Knowledge Knowledge `mapstructure:"knowledge"`

	// File is the config file that was read, "" when none was.
	File string `mapstructure:"-"`
	// UnknownEnv lists SWITCHBOARD_* environment variables that match no
	// key (likely typos), for doctor to warn about.
	UnknownEnv []string `mapstructure:"-"`
	// Warnings are findings of Load that do not stop serve (media.keep
	// and retention.media both set, and differently), for doctor and the
	// start-up log.
	Warnings []string `mapstructure:"-"`
}

// Database configures Postgres.
type Database struct {
	// URL is a postgres:// URL; empty means the embedded Postgres.
	URL string `mapstructure:"url" secret:"true"`
	// MaxConns is the size of the connection pool (1..500).
	MaxConns int `mapstructure:"max_conns"`
}

// Redis configures Redis.
type Redis struct {
	// URL is a redis:// or rediss:// URL; empty means the in-process Redis.
	URL string `mapstructure:"url" secret:"true"`
	// Prefix goes in front of every key, so deployments can share a Redis.
	Prefix string `mapstructure:"prefix"`
}

// HTTP configures the HTTP server.
type HTTP struct {
	// Listen is the host:port to listen on.
	Listen string `mapstructure:"listen"`
	// AdminToken turns the admin API (/api/v1) on: requests must carry
	// Authorization: Bearer <token>. Empty: the API is off.
	AdminToken string `mapstructure:"admin_token" secret:"true"`
	// PublicURL is the address people reach this server at (behind any
	// proxy), e.g. https://bot.example.com; links the daemon sends, such
	// as the admin console's login links, start with it. Empty: no links.
	PublicURL string `mapstructure:"public_url"`
}

// LLM configures the model provider.
type LLM struct {
	// Provider is openai (any OpenAI-compatible API) or anthropic.
	Provider string `mapstructure:"provider"`
	// BaseURL overrides the provider's API URL.
	BaseURL string `mapstructure:"base_url"`
	// APIKey authenticates to the provider.
	APIKey string `mapstructure:"api_key" secret:"true"`
	// Model names the model.
	Model string `mapstructure:"model"`
	// Fallbacks are models asked in order, on the same provider and base
	// URL, when Model fails after its retries (5xx, 429, timeout, refused
	// connection); never for a request Model refused as invalid.
	Fallbacks []string `mapstructure:"fallbacks"`
	// Timeout bounds one provider call.
	Timeout time.Duration `mapstructure:"timeout"`
	// MaxTokens caps a reply; 0 means the provider's default.
	MaxTokens int `mapstructure:"max_tokens"`
	// Vision says the model reads images: the pictures people send reach
	// it as image input.
	Vision bool `mapstructure:"vision"`
	// Prices are each model's dollars per million tokens, for costs and
	// dollar budgets (not settable by env).
	Prices map[string]Price `mapstructure:"prices"`
}

// Telegram configures the Telegram channel; a token turns it on.
type Telegram struct {
	// Token is the bot token.
	Token string `mapstructure:"token" secret:"true"`
	// APIURL is the Bot API server.
	APIURL string `mapstructure:"api_url"`
	// Mode is polling or webhook.
	Mode string `mapstructure:"mode"`
	// WebhookURL is the public https address of /webhooks/telegram
	// (webhook mode).
	WebhookURL string `mapstructure:"webhook_url"`
	// WebhookSecret is checked on every webhook request
	// (X-Telegram-Bot-Api-Secret-Token).
	WebhookSecret string `mapstructure:"webhook_secret" secret:"true"`
	// RequireMention makes the bot answer, in groups, only messages that
	// mention it, reply to it or are commands; private chats always.
	RequireMention bool `mapstructure:"require_mention"`
}

// Slack configures the Slack channel.
type Slack struct {
	// BotToken is the xoxb- token.
	BotToken string `mapstructure:"bot_token" secret:"true"`
	// AppToken is the xapp- token; set → Socket Mode.
	AppToken string `mapstructure:"app_token" secret:"true"`
	// SigningSecret verifies HTTP Events API requests.
	SigningSecret string `mapstructure:"signing_secret" secret:"true"`
	// APIURL overrides Slack's API URL (tests).
	APIURL string `mapstructure:"api_url"`
}

// Discord configures the Discord channel.
type Discord struct {
	// Token is the bot token.
	Token string `mapstructure:"token" secret:"true"`
	// APIURL overrides Discord's API URL (tests).
	APIURL string `mapstructure:"api_url"`
}

// Access says who may talk to agents.
type Access struct {
	// Mode is open, allowlist or request.
	Mode string `mapstructure:"mode"`
	// Allow lists platform:user_id identities allowed from the start.
	Allow []string `mapstructure:"allow"`
}

// Approvals configures who decides approvals and for how long they wait.
type Approvals struct {
	// Approvers may press approval buttons; empty means Admins.
	Approvers []string `mapstructure:"approvers"`
	// Timeout turns a pending approval into a denial.
	Timeout time.Duration `mapstructure:"timeout"`
	// Chat (platform:chat_id) receives approval requests; empty means the
	// approvers directly.
	Chat string `mapstructure:"chat"`
	// Groups name lists of identities rules refer to as group:NAME (not
	// settable by env).
	Groups map[string][]string `mapstructure:"groups"`
	// People map one person's identities on several platforms, so that
	// person counts once in a quorum (not settable by env).
	People map[string][]string `mapstructure:"people"`
	// Rules set quorums per tool, class or agent; first match wins (not
	// settable by env).
	Rules []ApprovalRule `mapstructure:"rules"`
}

// Exec gates the exec tool.
type Exec struct {
	// Approval is ask, deny or allow.
	Approval string `mapstructure:"approval"`
	// User is the account commands run as when the daemon runs as root
	// (default nobody); ignored otherwise.
	User string `mapstructure:"user"`
	// Sandbox is auto (bubblewrap when it works, else none with a loud
	// warning), bwrap (or refuse to start) or none.
	Sandbox string `mapstructure:"sandbox"`
	// Network lets sandboxed commands use the network (default: none).
	Network bool `mapstructure:"network"`
}

// Tools configures every tool.
type Tools struct {
	// RateLimit caps tool calls per session ("N/s", "N/m", "N/h" or "off").
	RateLimit string `mapstructure:"rate_limit"`
	// Profile, Allow, Deny, AlsoAllow and ByProvider are the global tool
	// policy (see ToolPolicy).
	Profile    string                `mapstructure:"profile"`
	Allow      []string              `mapstructure:"allow"`
	Deny       []string              `mapstructure:"deny"`
	AlsoAllow  []string              `mapstructure:"also_allow"`
	ByProvider map[string]ToolPolicy `mapstructure:"by_provider"`
	// Approvals maps a side-effect class (none, read_only, mutating,
	// network, blocking, spawns) to allow, ask or deny.
	Approvals map[string]string `mapstructure:"approvals"`
	// FS configures the file tools.
	FS FSTools `mapstructure:"fs"`
	// Web configures web_fetch and web_search.
	Web WebTools `mapstructure:"web"`
	// Memory configures memory search.
	Memory MemoryTools `mapstructure:"memory"`
}

// MemoryTools configures memory_search.
type MemoryTools struct {
	// Embedding, when its model is set, adds search by meaning.
	Embedding Embedding `mapstructure:"embedding"`
}

// Embedding configures an OpenAI-compatible embeddings model; empty
// base_url and api_key come from llm.* when llm.provider is openai.
type Embedding struct {
	Model   string `mapstructure:"model"`
	BaseURL string `mapstructure:"base_url"`
	APIKey  string `mapstructure:"api_key" secret:"true"`
}

// WebTools configures the web tools.
type WebTools struct {
	Fetch  WebFetch  `mapstructure:"fetch"`
	Search WebSearch `mapstructure:"search"`
}

// WebFetch configures web_fetch.
type WebFetch struct {
	// MaxBytes caps a page's size.
	MaxBytes int64 `mapstructure:"max_bytes"`
	// Timeout bounds one fetch.
	Timeout time.Duration `mapstructure:"timeout"`
	// AllowPrivate lets web_fetch reach loopback, private and link-local
	// addresses (off: the SSRF guard refuses them).
	AllowPrivate bool `mapstructure:"allow_private"`
}

// WebSearch configures web_search.
type WebSearch struct {
	// Provider is duckduckgo, brave or searxng.
	Provider string `mapstructure:"provider"`
	// URL overrides the provider's endpoint (required for searxng).
	URL string `mapstructure:"url"`
	// APIKey authenticates to Brave.
	APIKey string `mapstructure:"api_key" secret:"true"`
}

// FSTools configures read_file, write_file, edit, list_files, search and
// glob.
type FSTools struct {
	// DenyPaths are hidden from the file tools and refused: names (".git"
	// anywhere) or workspace-relative paths.
	DenyPaths []string `mapstructure:"deny_paths"`
}

// Policy returns the global tool policy.
func (t Tools) Policy() ToolPolicy {
	return ToolPolicy{Profile: t.Profile, Allow: t.Allow, Deny: t.Deny, AlsoAllow: t.AlsoAllow, ByProvider: t.ByProvider}
}

// ToolPolicy is one level of tool policy: a profile (full, coding,
// messaging, minimal), allow lists that narrow it, deny lists that remove,
// also_allow lists that add back; entries are tool names or group:NAME.
type ToolPolicy struct {
	Profile    string                `mapstructure:"profile"`
	Allow      []string              `mapstructure:"allow"`
	Deny       []string              `mapstructure:"deny"`
	AlsoAllow  []string              `mapstructure:"also_allow"`
	ByProvider map[string]ToolPolicy `mapstructure:"by_provider"`
}

// SideEffectClasses are the classes tools.approvals maps, with the
// defaults.
var SideEffectClasses = map[string]string{
	"none": "allow", "read_only": "allow", "mutating": "ask", "network": "ask", "blocking": "allow", "spawns": "ask",
}

// NamedAgent is one more agent (agents:), with its own model settings and
// policy; empty model settings default to llm.*.
type NamedAgent struct {
	Name          string `mapstructure:"name"`
	Description   string `mapstructure:"description"`
	SystemPrompt  string `mapstructure:"system_prompt"`
	MaxIterations int    `mapstructure:"max_iterations"`
	HistoryLimit  int    `mapstructure:"history_limit"`
	// ContextTokens overrides agent.context_tokens; 0 keeps it.
	ContextTokens int `mapstructure:"context_tokens"`
	// Provider, BaseURL, APIKey, Model and Vision override llm.*.
	Provider string `mapstructure:"provider"`
	BaseURL  string `mapstructure:"base_url"`
	APIKey   string `mapstructure:"api_key" secret:"true"`
	Model    string `mapstructure:"model"`
	// Vision, when set, says whether this agent's model reads images;
	// unset, llm.vision does.
	Vision *bool `mapstructure:"vision"`
	// Kind is predefined (context files per agent) or open (per user).
	Kind string `mapstructure:"kind"`
	// Tools is the agent's tool policy, applied after the global one.
	Tools ToolPolicy `mapstructure:"tools"`
	// Approvals overrides tools.approvals per side-effect class.
	Approvals map[string]string `mapstructure:"approvals"`
	// Skills, when set, are the only skills this agent sees instead of
	// skills.allow.
	Skills []string `mapstructure:"skills"`
}

// LLMFor returns the model settings of agent a: its own where set, else
// llm.*; llm.fallbacks only when a talks to llm's server.
func (c *Config) LLMFor(a NamedAgent) LLM {
	l := c.LLM
	if a.Provider != "" && a.Provider != l.Provider {
		// Another provider: llm.* URL, key and fallbacks belong to the
		// other one.
		l.Provider, l.BaseURL, l.APIKey, l.Fallbacks = a.Provider, "", "", nil
	}
	if a.BaseURL != "" && a.BaseURL != l.BaseURL {
		l.BaseURL, l.Fallbacks = a.BaseURL, nil // llm.fallbacks are models of llm.base_url's server
	}
	if a.APIKey != "" {
		l.APIKey = a.APIKey
	}
	if a.Model != "" {
		l.Model = a.Model
	}
	if a.Vision != nil {
		l.Vision = *a.Vision
	}
	return l
}

// Handoff configures handoff routes.
type Handoff struct {
	// TTL is how long a route lasts without use.
	TTL time.Duration `mapstructure:"ttl"`
}

// Subagents bounds subagents (the spawn tool).
type Subagents struct {
	// MaxConcurrent is how many run at once across all replicas.
	MaxConcurrent int `mapstructure:"max_concurrent"`
	// MaxDepth is how deep subagents may nest (1: a subagent cannot spawn).
	MaxDepth int `mapstructure:"max_depth"`
	// MaxChildren is how many one conversation runs at once.
	MaxChildren int `mapstructure:"max_children"`
	// ArchiveAfter is how long finished subagents stay listed.
	ArchiveAfter time.Duration `mapstructure:"archive_after"`
}

// Team is a lead agent and its members.
type Team struct {
	Name    string   `mapstructure:"name"`
	Lead    string   `mapstructure:"lead"`
	Members []string `mapstructure:"members"`
}

// Binding chooses the agent that answers in a chat: Chat is
// platform:chat[:thread], a trailing * matches a prefix.
type Binding struct {
	Chat  string `mapstructure:"chat"`
	Agent string `mapstructure:"agent"`
}

// RateLimit caps messages; each value is "N/s", "N/m", "N/h" or "off".
type RateLimit struct {
	// User is the limit per person.
	User string `mapstructure:"user"`
	// Chat is the limit per chat.
	Chat string `mapstructure:"chat"`
}

// Agent configures the default agent.
type Agent struct {
	// Name identifies the agent ([a-z0-9][a-z0-9_-]*).
	Name string `mapstructure:"name"`
	// Description says what the agent is for (/agents).
	Description string `mapstructure:"description"`
	// SystemPrompt is the agent's instructions.
	SystemPrompt string `mapstructure:"system_prompt"`
	// MaxIterations caps LLM ⇄ tool rounds in one run (1..200).
	MaxIterations int `mapstructure:"max_iterations"`
	// HistoryLimit is how many past messages go to the model.
	HistoryLimit int `mapstructure:"history_limit"`
	// ContextTokens is the token budget of what one model call is sent:
	// system prompt, tool schemas, summary and history (estimated).
	ContextTokens int `mapstructure:"context_tokens"`
	// Compaction summarizes the turns that no longer fit and sends the
	// summary in their place; false only leaves them out.
	Compaction bool `mapstructure:"compaction"`
}

// Conversation configures how messages reach a running agent.
type Conversation struct {
	// Queue is steer, followup or collect: what happens to a message that
	// arrives while the agent works on its chat.
	Queue string `mapstructure:"queue"`
	// Stream shows each answer in the chat while the model writes it;
	// false sends one message per reply once it is complete.
	Stream bool `mapstructure:"stream"`
}

// Log configures logging.
type Log struct {
	// Level is debug, info, warn or error.
	Level string `mapstructure:"level"`
	// Format is text or json.
	Format string `mapstructure:"format"`
}

// DefaultSystemPrompt is the default agent's instructions.
const DefaultSystemPrompt = "You are a helpful assistant that lives in a team chat. " +
	"Several people may talk to you in one conversation: keep replies short and clear, " +
	"say who you are answering when it helps, and say so when you are unsure."

// Defaults returns the configuration used for every key nothing sets.
func Defaults() Config {
	return Config{
		DataDir:  "./data",
		Database: Database{MaxConns: 16},
		Redis:    Redis{Prefix: "sb:"},
		HTTP:     HTTP{Listen: "127.0.0.1:8080"},
		LLM: LLM{
			Provider: "openai",
			Timeout:  120 * time.Second,
		},
		Telegram:  Telegram{APIURL: "https://api.telegram.org", Mode: "polling", RequireMention: true},
		Access:    Access{Mode: "request"},
		Approvals: Approvals{Timeout: 2 * time.Minute},
		Exec:      Exec{Approval: "ask", User: "nobody", Sandbox: "auto"},
		Tools: Tools{RateLimit: "60/m", FS: FSTools{DenyPaths: []string{".git", ".ssh", ".env"}},
			Web: WebTools{Fetch: WebFetch{MaxBytes: 2_000_000, Timeout: 20 * time.Second}, Search: WebSearch{Provider: "duckduckgo"}}},
		RateLimit: RateLimit{User: "20/m", Chat: "60/m"},
		Agent: Agent{
			Name:          "default",
			SystemPrompt:  DefaultSystemPrompt,
			MaxIterations: 20,
			HistoryLimit:  50,
			ContextTokens: 100000,
			Compaction:    true,
		},
		Conversation: Conversation{Queue: "steer", Stream: true},
		Media:        Media{MaxBytes: 20_000_000, Keep: 30 * 24 * time.Hour, TTS: MediaTTS{Voice: "alloy"}},
		Handoff:      Handoff{TTL: 24 * time.Hour},
		Retention:    Retention{Media: 30 * 24 * time.Hour},
		Skills:       Skills{Dirs: []string{"./skills"}},
		Knowledge:    Knowledge{Extract: true},
		Subagents:    Subagents{MaxConcurrent: 8, MaxDepth: 1, MaxChildren: 5, ArchiveAfter: time.Hour},
		Log:          Log{Level: "info", Format: "text"},
	}
}
