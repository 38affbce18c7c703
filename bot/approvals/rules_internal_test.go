package approvals

import (
	"slices"
	"testing"

	"github.com/switchboard-chat/switchboard/config"
	"github.com/switchboard-chat/switchboard/tools"
)

func TestRuleForFirstMatch(t *testing.T) {
	s := New(Options{Approvers: []string{"telegram:500"}, Rules: []Rule{
		{Agents: []string{"ops"}, Classes: []string{"network"}, Quorum: 3},
		{Tools: []string{"group:fs"}, Quorum: 2, Approvers: []string{"telegram:1"}},
		{Classes: []string{"mutating"}, Quorum: 2},
	}})
	req := func(tool, class, agent string, groups ...string) tools.ApprovalRequest {
		return tools.ApprovalRequest{Tool: tool, Class: class, Groups: groups, Call: tools.Call{Agent: agent}}
	}
	for _, tc := range []struct {
		name      string
		req       tools.ApprovalRequest
		quorum    int
		approvers []string
		matched   bool
	}{
		{"agent and class", req("web_fetch", "network", "ops"), 3, []string{"telegram:500"}, true},
		{"class without the agent", req("web_fetch", "network", "dev"), 1, []string{"telegram:500"}, false},
		{"tool group", req("write_file", "mutating", "dev", "fs"), 2, []string{"telegram:1"}, true},
		{"class", req("exec", "mutating", "dev"), 2, []string{"telegram:500"}, true},
		{"no match", req("spawn", "spawns", "dev"), 1, []string{"telegram:500"}, false},
	} {
		r := s.ruleFor(tc.req)
		if r.Quorum != tc.quorum || !slices.Equal(r.Approvers, tc.approvers) || r.matched != tc.matched {
			t.Errorf("%s: rule = quorum %d approvers %q matched %v; want %d %q %v", tc.name, r.Quorum, r.Approvers, r.matched, tc.quorum, tc.approvers, tc.matched)
		}
	}
	// Without a rule the requester may decide alone, as before rules.
	if r := s.ruleFor(req("spawn", "spawns", "dev")); !r.SelfApprove {
		t.Error("a request no rule matches does not let an approving requester decide")
	}
}

func TestRulesFromConfigExpandsGroups(t *testing.T) {
	rules, people := RulesFromConfig(config.Approvals{
		Groups: map[string][]string{"oncall": {"telegram:1", "slack:U1"}},
		People: map[string][]string{"alice": {"telegram:1", "slack:U1"}},
		Rules:  []config.ApprovalRule{{Tools: []string{"exec"}, Quorum: 2, Approvers: []string{"group:oncall", "telegram:1", "telegram:2"}, EscalateTo: []string{"group:oncall"}}},
	})
	if len(rules) != 1 || !slices.Equal(rules[0].Approvers, []string{"telegram:1", "slack:U1", "telegram:2"}) ||
		!slices.Equal(rules[0].EscalateTo, []string{"telegram:1", "slack:U1"}) {
		t.Fatalf("rules = %+v", rules)
	}
	if people["slack:U1"] != "alice" || people["telegram:1"] != "alice" {
		t.Fatalf("people = %v", people)
	}
}
