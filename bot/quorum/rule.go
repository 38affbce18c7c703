package quorum

import (
	"slices"
	"strings"
	"time"

	"github.com/switchboard-chat/switchboard/config"
)

// Rule says who must decide the requests it matches and how many of
// them (approvals.rules). A rule matches a request when each of its
// non-empty lists does: Tools (names or group:NAME), Classes
// (side-effect classes), Agents.
type Rule struct {
	Tools   []string
	Classes []string
	Agents  []string
	// Quorum is how many distinct people must allow; below 1 means 1.
	Quorum int
	// Approvers may vote (identities); empty: whoever decides requests of
	// that kind without rules.
	Approvers []string
	// SelfApprove lets the requester's own vote count.
	SelfApprove bool
	// EscalateAfter: a request still undecided this long after it was
	// asked is also sent to EscalateTo, who may then vote too.
	EscalateAfter time.Duration
	EscalateTo    []string
}

// Action is what a rule is matched against: the tool a request is about,
// the groups it belongs to, its side-effect class and the agent asking.
type Action struct {
	Tool   string
	Groups []string
	Class  string
	Agent  string
}

// Matches reports whether r applies to a.
func (r Rule) Matches(a Action) bool {
	if len(r.Tools) > 0 && !slices.ContainsFunc(r.Tools, func(t string) bool {
		if g, isGroup := strings.CutPrefix(t, "group:"); isGroup {
			return slices.Contains(a.Groups, g)
		}
		return t == a.Tool
	}) {
		return false
	}
	if len(r.Classes) > 0 && !slices.Contains(r.Classes, a.Class) {
		return false
	}
	return len(r.Agents) == 0 || slices.Contains(r.Agents, a.Agent)
}

// First returns the first of rules that matches a, its quorum at least 1
// and its approvers defaulted to approvers when it names none; ok is false
// when none matches.
func First(rules []Rule, a Action, approvers []string) (r Rule, ok bool) {
	for _, r := range rules {
		if r.Matches(a) {
			if len(r.Approvers) == 0 {
				r.Approvers = approvers
			}
			r.Quorum = max(r.Quorum, 1)
			return r, true
		}
	}
	return Rule{}, false
}

// FromConfig turns approvals.rules into Rules, group:NAME entries expanded
// from approvals.groups, and approvals.people into People. Config
// validation has checked the names.
func FromConfig(c config.Approvals) ([]Rule, People) {
	expand := func(list []string) []string {
		var out []string
		for _, e := range list {
			ids := []string{e}
			if g, isGroup := strings.CutPrefix(e, "group:"); isGroup {
				ids = c.Groups[g]
			}
			for _, id := range ids {
				if !slices.Contains(out, id) {
					out = append(out, id)
				}
			}
		}
		return out
	}
	rules := make([]Rule, 0, len(c.Rules))
	for _, r := range c.Rules {
		rules = append(rules, Rule{
			Tools: r.Tools, Classes: r.Classes, Agents: r.Agents, Quorum: r.Quorum,
			Approvers: expand(r.Approvers), SelfApprove: r.SelfApprove,
			EscalateAfter: r.EscalateAfter, EscalateTo: expand(r.EscalateTo),
		})
	}
	people := People{}
	for name, ids := range c.People {
		for _, id := range ids {
			people[id] = name
		}
	}
	return rules, people
}
