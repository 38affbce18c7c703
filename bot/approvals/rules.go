package approvals

import (
	"slices"
	"strings"
	"time"

	"github.com/switchboard-chat/switchboard/config"
	"github.com/switchboard-chat/switchboard/tools"
)

// Rule says who must decide the approvals it matches and how many of
// them (approvals.rules). A rule matches a request when each of its
// non-empty lists does: Tools (names or group:NAME), Classes
// (side-effect classes), Agents.
type Rule struct {
	Tools   []string
	Classes []string
	Agents  []string
	// Quorum is how many distinct people must allow; below 1 means 1.
	Quorum int
	// Approvers may vote (identities); empty: Options.Approvers.
	Approvers []string
	// SelfApprove lets the requester's own vote count.
	SelfApprove bool
	// EscalateAfter: a request still undecided this long after it was
	// asked is also sent to EscalateTo, who may then vote too.
	EscalateAfter time.Duration
	EscalateTo    []string
}

// matches reports whether r applies to req.
func (r Rule) matches(req tools.ApprovalRequest) bool {
	if len(r.Tools) > 0 && !slices.ContainsFunc(r.Tools, func(t string) bool {
		if g, isGroup := strings.CutPrefix(t, "group:"); isGroup {
			return slices.Contains(req.Groups, g)
		}
		return t == req.Tool
	}) {
		return false
	}
	if len(r.Classes) > 0 && !slices.Contains(r.Classes, req.Class) {
		return false
	}
	return len(r.Agents) == 0 || slices.Contains(r.Agents, req.Call.Agent)
}

// askedRule is the rule a request is asked under: the first matching one
// with its approvers filled in, or none (one approver, as without rules).
type askedRule struct {
	Rule
	matched bool
}

// ruleFor resolves the rule req is asked under.
func (s *Service) ruleFor(req tools.ApprovalRequest) askedRule {
	for _, r := range s.o.Rules {
		if r.matches(req) {
			if len(r.Approvers) == 0 {
				r.Approvers = s.o.Approvers
			}
			r.Quorum = max(r.Quorum, 1)
			return askedRule{Rule: r, matched: true}
		}
	}
	return askedRule{Rule: Rule{Quorum: 1, Approvers: s.o.Approvers, SelfApprove: true}}
}

// apply writes what the rule says onto a new approval, to be stored with
// it. Without a rule the approval keeps no approver list of its own (the
// configured approvers decide, as for approvals made before rules) and
// the requester, when an approver, may decide it alone.
func (r askedRule) apply(a Approval) Approval {
	a.Quorum, a.SelfApprove = r.Quorum, r.SelfApprove
	if !r.matched {
		return a
	}
	a.Approvers = slices.Clone(r.Approvers)
	if r.EscalateAfter > 0 && len(r.EscalateTo) > 0 {
		a.EscalateAt, a.EscalateTo = a.CreatedAt.Add(r.EscalateAfter), slices.Clone(r.EscalateTo)
	}
	return a
}

// approversOf are the identities that may vote on a (before escalation).
func (s *Service) approversOf(a Approval) []string {
	if len(a.Approvers) > 0 {
		return a.Approvers
	}
	return s.o.Approvers
}

// mayVote reports whether identity may vote on a: one of its approvers,
// or, once it escalated, one of those it escalated to.
func (s *Service) mayVote(a Approval, identity string) bool {
	return slices.Contains(s.approversOf(a), identity) ||
		(!a.EscalatedAt.IsZero() && slices.Contains(a.EscalateTo, identity))
}

// personOf is the person identity belongs to (Options.People), or the
// identity itself.
func (s *Service) personOf(identity string) string {
	if p, ok := s.o.People[identity]; ok {
		return "person:" + p
	}
	return identity
}

// RulesFromConfig turns approvals.rules into Rules, group:NAME entries
// expanded from approvals.groups, and approvals.people into the identity
// → person map of Options.People. Config validation has checked the names.
func RulesFromConfig(c config.Approvals) ([]Rule, map[string]string) {
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
	people := map[string]string{}
	for name, ids := range c.People {
		for _, id := range ids {
			people[id] = name
		}
	}
	return rules, people
}
