package quorum_test

import (
	"errors"
	"testing"

	"github.com/switchboard-chat/switchboard/bot/quorum"
)

func TestAdmit(t *testing.T) {
	people := quorum.People{"telegram:42": "dev", "slack:U42": "dev"}
	b := quorum.Ballot{Voters: []string{"telegram:1", "telegram:42", "slack:U42"}, Requester: "telegram:42"}
	for _, tc := range []struct {
		who   string
		press bool
		want  error
	}{
		{"telegram:1", true, nil},
		{"telegram:9", true, quorum.ErrNotApprover},
		{"telegram:9", false, nil}, // a trusted caller (the admin API) need not be a voter
		{"telegram:42", true, quorum.ErrOwnRequest},
		{"slack:U42", true, quorum.ErrOwnRequest}, // the requester's second account
		{"slack:U42", false, quorum.ErrOwnRequest},
	} {
		if err := people.Admit(b, tc.who, tc.press); !errors.Is(err, tc.want) {
			t.Errorf("%s (press %v): %v, want %v", tc.who, tc.press, err, tc.want)
		}
	}
	b.SelfApprove = true
	if err := people.Admit(b, "slack:U42", true); err != nil {
		t.Errorf("self_approve: the requester's press refused: %v", err)
	}
	if err := people.Admit(quorum.Ballot{Voters: []string{"telegram:1"}}, "telegram:1", true); err != nil {
		t.Errorf("no requester (a job's grant): %v", err)
	}
}

func TestLine(t *testing.T) {
	votes := []quorum.Vote{{Identity: "telegram:1", Choice: "approved"}, {Identity: "telegram:2", Choice: quorum.ChoiceDenied}}
	for _, tc := range []struct {
		votes  []quorum.Vote
		quorum int
		want   string
	}{
		{votes, 1, ""},
		{nil, 2, "\n0 of 2 — no votes yet"},
		{votes, 2, "\n1 of 2 — ✅ telegram:1, ⛔ telegram:2"},
	} {
		if got := quorum.Line(tc.votes, tc.quorum); got != tc.want {
			t.Errorf("Line(%d votes, %d) = %q, want %q", len(tc.votes), tc.quorum, got, tc.want)
		}
	}
}

func TestFirst(t *testing.T) {
	rules := []quorum.Rule{
		{Tools: []string{"group:mcp:github"}, Classes: []string{"mutating"}, Quorum: 2},
		{Agents: []string{"ops"}, Approvers: []string{"telegram:9"}},
	}
	r, ok := quorum.First(rules, quorum.Action{Tool: "mcp_github_x", Groups: []string{"mcp", "mcp:github"}, Class: "mutating"}, []string{"telegram:1"})
	if !ok || r.Quorum != 2 || len(r.Approvers) != 1 || r.Approvers[0] != "telegram:1" {
		t.Errorf("group and class: %+v, %v", r, ok)
	}
	if r, ok := quorum.First(rules, quorum.Action{Tool: "exec", Agent: "ops"}, nil); !ok || r.Quorum != 1 || r.Approvers[0] != "telegram:9" {
		t.Errorf("agent: %+v, %v", r, ok)
	}
	if _, ok := quorum.First(rules, quorum.Action{Tool: "mcp_github_x", Groups: []string{"mcp:github"}, Class: "read_only"}, nil); ok {
		t.Error("a read-only tool matched the mutating rule")
	}
}
