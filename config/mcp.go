package config

import (
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"

	"go.yaml.in/yaml/v3"
)

// MCP lists MCP servers (file only).
type MCP struct {
	Servers []MCPServer `mapstructure:"servers"`
}

// MCPServer is one MCP server whose tools are bridged as mcp_<name>_<tool>.
type MCPServer struct {
	Name string `mapstructure:"name"`
	// Transport is stdio, sse or http (streamable HTTP).
	Transport string `mapstructure:"transport"`
	// Command runs a stdio server: the program and its arguments, no shell.
	Command []string `mapstructure:"command"`
	// Env is the stdio server's whole environment besides PATH; values may
	// name the daemon's variables as ${NAME}. Names keep their case.
	Env map[string]string `mapstructure:"env"`
	// URL is the sse or http server's endpoint.
	URL string `mapstructure:"url"`
	// Headers are sent with every request to an sse or http server
	// (${NAME} expanded; names keep their case).
	Headers map[string]string `mapstructure:"headers"`
	// Tools narrows which of the server's tools are bridged.
	Tools MCPToolFilter `mapstructure:"tools"`
	// Grants say who may use the server's tools without asking.
	Grants MCPGrants `mapstructure:"grants"`
}

// MCPToolFilter allows and denies a server's tools by their own names.
type MCPToolFilter struct {
	Allow []string `mapstructure:"allow"`
	Deny  []string `mapstructure:"deny"`
}

// MCPGrants name the agents and users (platform:user_id) that may use a
// server's tools without asking; everyone else asks an admin.
type MCPGrants struct {
	Agents []string `mapstructure:"agents"`
	Users  []string `mapstructure:"users"`
}

// mcpName is what an MCP server may be called.
var mcpName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

// CheckMCPServer lists what is wrong with one server (added through the
// admin API); agents are the configured agents' names.
func CheckMCPServer(s MCPServer, agents []string) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	c := &Config{MCP: MCP{Servers: []MCPServer{s}}}
	c.checkMCPServers(add, agents)
	return out
}

// validateMCP checks mcp.servers.
func (c *Config) validateMCP(add func(string, ...any)) { c.checkMCPServers(add, c.AgentNames()) }

func (c *Config) checkMCPServers(add func(string, ...any), agents []string) {
	seen := map[string]bool{}
	for i, s := range c.MCP.Servers {
		where := fmt.Sprintf("mcp.servers[%d]", i)
		if !mcpName.MatchString(s.Name) {
			add("%s.name %q must be 1–32 of a-z, 0-9, _ and -, starting with a letter or digit (it becomes part of tool names)", where, s.Name)
		} else if seen[s.Name] {
			add("%s.name %q is used twice", where, s.Name)
		}
		seen[s.Name] = true
		switch s.Transport {
		case "stdio":
			if len(s.Command) == 0 || s.Command[0] == "" {
				add("%s (%s): transport stdio needs command: [program, args…]", where, s.Name)
			}
		case "sse", "http":
			if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				add("%s (%s): transport %s needs url: an http(s) URL (got %q)", where, s.Name, s.Transport, s.URL)
			}
		default:
			add("%s (%s): transport must be stdio, sse or http (got %q)", where, s.Name, s.Transport)
		}
		for _, a := range s.Grants.Agents {
			if !slices.Contains(agents, a) {
				msg := fmt.Sprintf("%s (%s): grants.agents names %q, which is not an agent", where, s.Name, a)
				if hint := suggest(a, agents); hint != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", hint)
				}
				add("%s", msg)
			}
		}
	}
}

// caseKeptMaps re-reads from the YAML file the maps whose keys are names
// that must keep their case — mcp.servers[].env and .headers,
// custom_tools[].env and .parameters, credentialed_exec[].env, approvals.groups and
// approvals.people (the config library lower-cases map
// keys: API_KEY would reach the server as api_key) — and expands ${NAME}
// in env and header values from the daemon's environment.
func (c *Config) caseKeptMaps(data []byte) error {
	var raw struct {
		MCP struct {
			Servers []struct {
				Env     map[string]string `yaml:"env"`
				Headers map[string]string `yaml:"headers"`
			} `yaml:"servers"`
		} `yaml:"mcp"`
		CustomTools []struct {
			Env        map[string]string `yaml:"env"`
			Parameters map[string]any    `yaml:"parameters"`
		} `yaml:"custom_tools"`
		CredentialedExec []struct {
			Env map[string]string `yaml:"env"`
		} `yaml:"credentialed_exec"`
		Approvals struct {
			Groups map[string][]string `yaml:"groups"`
			People map[string][]string `yaml:"people"`
		} `yaml:"approvals"`
	}
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return err
	}
	for i := range c.MCP.Servers {
		if i >= len(raw.MCP.Servers) {
			break
		}
		c.MCP.Servers[i].Env = expandAll(raw.MCP.Servers[i].Env)
		c.MCP.Servers[i].Headers = expandAll(raw.MCP.Servers[i].Headers)
	}
	for i := range c.CustomTools {
		if i >= len(raw.CustomTools) {
			break
		}
		c.CustomTools[i].Env = expandAll(raw.CustomTools[i].Env)
		c.CustomTools[i].Parameters = raw.CustomTools[i].Parameters
	}
	for i := range c.CredentialedExec {
		if i < len(raw.CredentialedExec) {
			c.CredentialedExec[i].Env = expandAll(raw.CredentialedExec[i].Env)
		}
	}
	// Group and person names are referred to as written (group:OnCall);
	// both are file only, so the file's maps are the whole of them.
	if raw.Approvals.Groups != nil {
		c.Approvals.Groups = raw.Approvals.Groups
	}
	if raw.Approvals.People != nil {
		c.Approvals.People = raw.Approvals.People
	}
	return nil
}

// expandAll expands ${NAME} in m's values from the environment.
func expandAll(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = os.Expand(v, os.Getenv)
	}
	return out
}
