package config

import (
	"strings"
	"testing"
	"time"
)

// quorumConfig is valid() with a group, a person on two platforms and a
// two-person rule for exec.
func quorumConfig() Config {
	c := valid()
	c.Approvals.Groups = map[string][]string{"oncall": {"telegram:1001", "slack:U0ABC", "telegram:1002"}}
	c.Approvals.People = map[string][]string{"alice": {"telegram:1001", "slack:U0ABC"}}
	c.Approvals.Rules = []ApprovalRule{{
		Tools: []string{"exec"}, Quorum: 2, Approvers: []string{"group:oncall"},
		EscalateAfter: time.Minute, EscalateTo: []string{"telegram:1009"},
	}}
	return c
}

func TestApprovalRulesValid(t *testing.T) {
	c := quorumConfig()
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate = %v", err)
	}
}

func TestApprovalRulesMistakes(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(c *Config)
		want   string
	}{
		{"unknown group", func(c *Config) { c.Approvals.Rules[0].Approvers = []string{"group:ops"} },
			`approvals.rules[0].approvers: group "ops" is not in approvals.groups (groups are oncall)`},
		{"negative quorum", func(c *Config) { c.Approvals.Rules[0].Quorum = -1 }, "approvals.rules[0].quorum must be 1 or more (got -1)"},
		{"quorum above people", func(c *Config) { c.Approvals.Rules[0].Quorum = 3 },
			"approvals.rules[0].quorum 3 needs more approvers than it has: 2 distinct people"},
		{"bad identity", func(c *Config) { c.Approvals.Rules[0].Approvers = []string{"alice"} },
			`approvals.rules[0].approvers: "alice" is not platform:user_id`},
		{"bad group member", func(c *Config) { c.Approvals.Groups["oncall"] = append(c.Approvals.Groups["oncall"], "irc:x") },
			`approvals.groups.oncall: "irc:x" names unknown platform`},
		{"bad person identity", func(c *Config) { c.Approvals.People["bob"] = []string{"bob"} }, `approvals.people.bob: "bob" is not platform:user_id`},
		{"identity of two people", func(c *Config) { c.Approvals.People["bob"] = []string{"telegram:1001"} },
			`approvals.people: "telegram:1001" is listed for both alice and bob`},
		{"escalate_after alone", func(c *Config) { c.Approvals.Rules[0].EscalateTo = nil },
			"approvals.rules[0].escalate_after is set but escalate_to is empty"},
		{"escalate_to alone", func(c *Config) { c.Approvals.Rules[0].EscalateAfter = 0 },
			"approvals.rules[0].escalate_to is set but escalate_after is not"},
		{"escalate after expiry", func(c *Config) { c.Approvals.Rules[0].EscalateAfter = c.Approvals.Timeout },
			"must be shorter than approvals.timeout"},
		{"bad escalate_to", func(c *Config) { c.Approvals.Rules[0].EscalateTo = []string{"group:nobody"} },
			`approvals.rules[0].escalate_to: group "nobody" is not in approvals.groups`},
		{"unknown class", func(c *Config) { c.Approvals.Rules[0].Classes = []string{"mutate"} },
			`approvals.rules[0].classes: "mutate" is not a side-effect class; classes are`},
		{"unknown agent", func(c *Config) { c.Approvals.Rules[0].Agents = []string{"opz"} },
			`approvals.rules[0].agents names unknown agent "opz"`},
		{"empty tool", func(c *Config) { c.Approvals.Rules[0].Tools = []string{"group:"} },
			`approvals.rules[0].tools: "group:" is not a tool name or group:NAME`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := quorumConfig()
			tt.mutate(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// TestApprovalGroupNamesKeepCase: group and person names are written as
// they are in the file, so group:OnCall finds OnCall.
func TestApprovalGroupNamesKeepCase(t *testing.T) {
	c := mustLoad(t, LoadOptions{File: writeFile(t, `admins: ["telegram:42"]
approvals:
  groups: {OnCall: ["telegram:1", "slack:U0ABC"]}
  people: {Alice: ["telegram:1", "slack:U0ABC"]}
  rules:
    - tools: [exec]
      approvers: ["group:OnCall", "telegram:2"]
      quorum: 2
`)})
	if len(c.Approvals.Groups["OnCall"]) != 2 || len(c.Approvals.People["Alice"]) != 2 {
		t.Fatalf("groups %v, people %v; want the names as written", c.Approvals.Groups, c.Approvals.People)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate = %v", err)
	}
}
