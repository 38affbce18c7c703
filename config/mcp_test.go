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

// TestCustomToolsKeepCase: custom tools' parameter names and env names keep
// their case, and credentialed_exec's env too.
func TestCustomToolsKeepCase(t *testing.T) {
	t.Setenv("DNS_KEY_FOR_TEST", "k-1")
	path := writeFile(t, `custom_tools:
  - name: dns_lookup
    description: dig
    parameters: {type: object, properties: {recordType: {type: string}, domain: {type: string}}, required: [domain]}
    command: "dig -t {{.recordType}} -- {{.domain}}"
    env: {DNS_API_KEY: "${DNS_KEY_FOR_TEST}"}
credentialed_exec:
  - {binary: gh, path: /usr/bin/gh, env: {GH_TOKEN: "t-2"}, deny_args: ["^pr\\s+merge"]}
`)
	c := mustLoad(t, LoadOptions{File: path})
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	params := string(c.CustomTools[0].ParametersJSON())
	if !strings.Contains(params, `"recordType"`) || c.CustomTools[0].Env["DNS_API_KEY"] != "k-1" {
		t.Fatalf("parameters = %s, env = %v", params, c.CustomTools[0].Env)
	}
	if c.CredentialedExec[0].Env["GH_TOKEN"] != "t-2" {
		t.Fatalf("credentialed env = %v", c.CredentialedExec[0].Env)
	}
	for _, want := range []string{"k-1", "t-2"} {
		found := false
		for _, s := range c.Secrets() {
			found = found || s == want
		}
		if !found {
			t.Errorf("%s is not scrubbed", want)
		}
	}
}
