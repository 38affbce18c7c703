package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/switchboard-chat/switchboard/config"
	"github.com/switchboard-chat/switchboard/tools/mcp"
)

// mcpServer converts a configured MCP server for the bridge.
func mcpServer(s config.MCPServer) mcp.Server {
	return mcp.Server{Name: s.Name, Transport: s.Transport, Command: s.Command, Env: s.Env, URL: s.URL,
		Headers: s.Headers, Allow: s.Tools.Allow, Deny: s.Tools.Deny}
}

// mcpGrants returns, per server, who the config lets use it without asking.
func mcpGrants(cfg *config.Config) func(server string) (agents, users []string) {
	return func(server string) ([]string, []string) {
		for _, s := range cfg.MCP.Servers {
			if s.Name == server {
				return s.Grants.Agents, s.Grants.Users
			}
		}
		return nil, nil
	}
}

// mcpStatusLines say, for /status, how each MCP server is doing.
func (d *daemon) mcpStatusLines(context.Context) []string {
	var out []string
	for _, s := range d.mcp.Statuses() {
		switch {
		case s.Up:
			out = append(out, fmt.Sprintf("✅ MCP %s (%s): %d tools", s.Name, s.Transport, s.Tools))
		default:
			why := s.LastError
			if why == "" {
				why = "connecting"
			}
			out = append(out, fmt.Sprintf("❌ MCP %s (%s): down — %s", s.Name, s.Transport, strings.TrimSpace(why)))
		}
	}
	return out
}
