package config

import (
	"reflect"
	"strings"
	"testing"
)

// TestMCPServersKeepMapCase: env and headers names keep their case (the
// config library would lower-case them) and ${NAME} is expanded from the
// daemon's environment.
func TestMCPServersKeepMapCase(t *testing.T) {
	t.Setenv("GH_TOKEN_FOR_TEST", "tok-123")
	path := writeFile(t, `mcp:
  servers:
    - name: files
      transport: stdio
      command: ["mcp-server-files", "--root", "/srv"]
      env: {API_KEY: "${GH_TOKEN_FOR_TEST}", Mixed_Case: "x"}
      tools: {deny: [delete]}
      grants: {agents: [default], users: ["telegram:42"]}
    - name: remote
      transport: http
      url: "https://mcp.example.com/mcp"
      headers: {Authorization: "Bearer ${GH_TOKEN_FOR_TEST}"}
`)
	c := mustLoad(t, LoadOptions{File: path})
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	s := c.MCP.Servers
	if len(s) != 2 {
		t.Fatalf("servers = %+v", s)
	}
	if want := map[string]string{"API_KEY": "tok-123", "Mixed_Case": "x"}; !reflect.DeepEqual(s[0].Env, want) {
		t.Errorf("env = %v, want %v", s[0].Env, want)
	}
	if got := s[1].Headers["Authorization"]; got != "Bearer tok-123" {
		t.Errorf("headers = %v", s[1].Headers)
	}
	if !reflect.DeepEqual(s[0].Command, []string{"mcp-server-files", "--root", "/srv"}) || s[0].Tools.Deny[0] != "delete" ||
		s[0].Grants.Users[0] != "telegram:42" {
		t.Errorf("server = %+v", s[0])
	}
}

func TestMCPServersValidation(t *testing.T) {
	path := writeFile(t, `mcp:
  servers:
    - {name: Bad Name, transport: stdio, command: [x]}
    - {name: a, transport: stdio}
    - {name: a, transport: http, url: "ftp://x"}
    - {name: b, transport: carrier-pigeon}
    - {name: c, transport: sse, url: "http://127.0.0.1:9/sse", grants: {agents: [defualt]}}
`)
	c := mustLoad(t, LoadOptions{File: path})
	err := c.Validate()
	if err == nil {
		t.Fatal("Validate accepted bad mcp servers")
	}
	for _, want := range []string{
		`mcp.servers[0].name "Bad Name" must be`,
		"mcp.servers[1] (a): transport stdio needs command",
		`mcp.servers[2].name "a" is used twice`,
		"mcp.servers[2] (a): transport http needs url",
		`mcp.servers[3] (b): transport must be stdio, sse or http (got "carrier-pigeon")`,
		`grants.agents names "defualt", which is not an agent (did you mean "default"?)`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
