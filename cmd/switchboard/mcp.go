package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/switchboard-chat/switchboard/config"
	"github.com/switchboard-chat/switchboard/tools/mcp"
)

// mcpServer converts a configured MCP server for the bridge.
func mcpServer(s config.MCPServer) mcp.Server {
	return mcp.Server{Name: s.Name, Transport: s.Transport, Command: s.Command, Env: s.Env, URL: s.URL,
		Headers: s.Headers, Allow: s.Tools.Allow, Deny: s.Tools.Deny, GrantAgents: s.Grants.Agents, GrantUsers: s.Grants.Users}
}

// mcpGrants returns who may use server without asking (its config, or
// what it was added with at run time).
func (d *daemon) mcpGrants(server string) (agents, users []string) {
	s, ok := d.mcp.Server(server)
	if !ok {
		return nil, nil
	}
	return s.GrantAgents, s.GrantUsers
}

// loadMCPServers connects the servers added at run time. Stored secrets
// without their key stop the start, as for custom tools.
func (d *daemon) loadMCPServers(ctx context.Context) error {
	list, err := d.mcpDB.List(ctx)
	if err != nil {
		return fmt.Errorf("stored MCP servers: %w", err)
	}
	for _, s := range list {
		if d.configuredMCP(s.Name) {
			d.log.Warn("a stored MCP server has the name of a configured one; the config's wins", "mcp_server", s.Name)
			continue
		}
		for _, v := range s.Env {
			d.scrubber.Add(v)
		}
		for _, v := range s.Headers {
			d.scrubber.Add(v)
		}
		d.mcp.Add(s)
	}
	return nil
}

func (d *daemon) configuredMCP(name string) bool {
	return slices.ContainsFunc(d.cfg.MCP.Servers, func(s config.MCPServer) bool { return s.Name == name })
}

// mcpList is the admin API's view of the MCP servers.
func (d *daemon) mcpList(context.Context) (any, error) {
	type server struct {
		mcp.Status
		Source string `json:"source"` // config | api
	}
	var out []server
	for _, st := range d.mcp.Statuses() {
		src := "api"
		if d.configuredMCP(st.Name) {
			src = "config"
		}
		out = append(out, server{Status: st, Source: src})
	}
	return out, nil
}

// mcpAdd stores and connects a server sent to the admin API (the config's
// format, as JSON).
func (d *daemon) mcpAdd(ctx context.Context, raw json.RawMessage, by string) error {
	var s config.MCPServer
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var j struct {
		Name      string            `json:"name"`
		Transport string            `json:"transport"`
		Command   []string          `json:"command"`
		Env       map[string]string `json:"env"`
		URL       string            `json:"url"`
		Headers   map[string]string `json:"headers"`
		Tools     struct{ Allow, Deny []string }
		Grants    struct{ Agents, Users []string }
	}
	if err := dec.Decode(&j); err != nil {
		return fmt.Errorf("the body is not an MCP server (%v); send the config's fields as JSON: name, transport, command, env, url, headers, tools, grants", err)
	}
	s = config.MCPServer{Name: j.Name, Transport: j.Transport, Command: j.Command, Env: j.Env, URL: j.URL, Headers: j.Headers,
		Tools: config.MCPToolFilter{Allow: j.Tools.Allow, Deny: j.Tools.Deny}, Grants: config.MCPGrants{Agents: j.Grants.Agents, Users: j.Grants.Users}}
	if problems := config.CheckMCPServer(s, d.cfg.AgentNames()); len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	if d.configuredMCP(s.Name) {
		return fmt.Errorf("%q is a configured server; change it in the config file", s.Name)
	}
	for _, v := range s.Env {
		d.scrubber.Add(v)
	}
	for _, v := range s.Headers {
		d.scrubber.Add(v)
	}
	srv := mcpServer(s)
	if err := d.mcpDB.Put(ctx, srv, by); err != nil {
		return err
	}
	d.mcp.Add(srv)
	return nil
}

// mcpRemove disconnects and forgets a server added at run time.
func (d *daemon) mcpRemove(ctx context.Context, name, by string) (bool, error) {
	if d.configuredMCP(name) {
		return false, fmt.Errorf("%q is a configured server; remove it from the config file", name)
	}
	found, err := d.mcpDB.Delete(ctx, name, by)
	if err != nil || !found {
		return found, err
	}
	d.mcp.Remove(name)
	return true, nil
}

// mcpStatusLines say, for /status, how each MCP server is doing.
func (d *daemon) mcpStatusLines(context.Context) []string {
	var out []string
	for _, s := range d.mcp.Statuses() {
		switch {
		case s.Up && s.Resources:
			out = append(out, fmt.Sprintf("✅ MCP %s (%s): %d tools, resources", s.Name, s.Transport, s.Tools))
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
