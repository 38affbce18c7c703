package config

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// CustomTool is a tool that runs a shell command rendered from a template
// whose {{.name}} placeholders are filled with the call's arguments, each
// shell-quoted.
type CustomTool struct {
	Name        string `mapstructure:"name"`
	Description string `mapstructure:"description"`
	// Parameters is the JSON schema of the arguments (an object); its
	// property names keep their case.
	Parameters map[string]any `mapstructure:"parameters"`
	Command    string         `mapstructure:"command"`
	// Timeout bounds one run (default 30s, at most 10m).
	Timeout time.Duration `mapstructure:"timeout"`
	// Env is added to the command's environment (${NAME} expanded; names
	// keep their case). Its values are scrubbed from all output.
	Env map[string]string `mapstructure:"env"`
}

// ParametersJSON returns the parameters schema as JSON.
func (t CustomTool) ParametersJSON() json.RawMessage {
	if len(t.Parameters) == 0 {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	raw, err := json.Marshal(t.Parameters)
	if err != nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	return raw
}

// CustomToolNames returns the names of the configured custom tools, which
// tool policy lists may name.
func (c *Config) CustomToolNames() []string {
	names := make([]string, 0, len(c.CustomTools))
	for _, t := range c.CustomTools {
		names = append(names, t.Name)
	}
	return names
}

// SecretsKey configures encryption of secrets at rest (secrets:).
type SecretsKey struct {
	// KeyFile holds the 32-byte key (raw, hex or base64).
	KeyFile string `mapstructure:"key_file"`
	// Key is the key itself, from SWITCHBOARD_SECRETS_KEY (wins over
	// KeyFile).
	Key string `mapstructure:"key" secret:"true"`
}

// toolName is what a custom tool may be called.
var toolName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// validateCustomTools checks custom_tools (the templates themselves are
// checked where they are parsed, in tools).
func (c *Config) validateCustomTools(add func(string, ...any)) {
	seen := map[string]bool{}
	for i, t := range c.CustomTools {
		where := fmt.Sprintf("custom_tools[%d]", i)
		if !toolName.MatchString(t.Name) {
			add("%s.name %q must be a-z, 0-9 and _, starting with a letter, at most 64 long", where, t.Name)
		} else if seen[t.Name] {
			add("%s.name %q is used twice", where, t.Name)
		}
		seen[t.Name] = true
		if t.Command == "" {
			add("%s (%s): command is empty", where, t.Name)
		}
		if t.Timeout < 0 || t.Timeout > 10*time.Minute {
			add("%s (%s): timeout must be between 0 (30s) and 10m (got %s)", where, t.Name, t.Timeout)
		}
		if typ, ok := t.Parameters["type"]; len(t.Parameters) > 0 && (!ok || typ != "object") {
			add("%s (%s): parameters must be a JSON schema with type: object", where, t.Name)
		}
	}
}

// CredentialedBinary is a CLI credentialed_exec runs without a shell, with
// its credentials in its environment only.
type CredentialedBinary struct {
	Binary string `mapstructure:"binary"`
	// Path is the program's absolute path (find it with: command -v gh).
	Path string `mapstructure:"path"`
	// Env holds the credentials (${NAME} expanded; names keep their case);
	// scrubbed from all output.
	Env      map[string]string `mapstructure:"env"`
	DenyArgs []string          `mapstructure:"deny_args"`
	Timeout  time.Duration     `mapstructure:"timeout"`
}

// validateCredentialed checks credentialed_exec.
func (c *Config) validateCredentialed(add func(string, ...any)) {
	seen := map[string]bool{}
	for i, b := range c.CredentialedExec {
		where := fmt.Sprintf("credentialed_exec[%d]", i)
		switch {
		case b.Binary == "" || strings.ContainsAny(b.Binary, `/\ `):
			add("%s.binary %q must be a bare program name like gh", where, b.Binary)
		case seen[b.Binary]:
			add("%s.binary %q is listed twice", where, b.Binary)
		}
		seen[b.Binary] = true
		if !filepath.IsAbs(b.Path) {
			add("%s (%s): path must be the program's absolute path (find it with: command -v %s)", where, b.Binary, b.Binary)
		}
		for _, p := range b.DenyArgs {
			if _, err := regexp.Compile(p); err != nil {
				add("%s (%s): deny_args %q is not a valid regular expression: %v", where, b.Binary, p, err)
			}
		}
		if b.Timeout < 0 || b.Timeout > 10*time.Minute {
			add("%s (%s): timeout must be between 0 (30s) and 10m", where, b.Binary)
		}
	}
}
