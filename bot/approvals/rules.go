package approvals

import (
	"slices"

	"github.com/switchboard-chat/switchboard/bot/quorum"
	"github.com/switchboard-chat/switchboard/config"
	"github.com/switchboard-chat/switchboard/tools"
)

// Rule says who must decide the approvals it matches and how many of
// them (approvals.rules); see quorum.Rule. Empty Approvers means
// Options.Approvers.
type Rule = quorum.Rule

// actionOf is what rules are matched against for req.
func actionOf(req tools.ApprovalRequest) quorum.Action {
	return quorum.Action{Tool: req.Tool, Groups: req.Groups, Class: req.Class, Agent: req.Call.Agent}
}

// askedRule is the rule a request is asked under: the first matching one
// with its approvers filled in, or none (one approver, as without rules).
type askedRule struct {
	Rule
	matched bool
}

// ruleFor resolves the rule req is asked under.
func (s *Service) ruleFor(req tools.ApprovalRequest) askedRule {
	if r, ok := quorum.First(s.o.Rules, actionOf(req), s.o.Approvers); ok {
		return askedRule{Rule: r, matched: true}
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

// ballotOf is who may vote on a: its approvers, and, once it escalated,
// those it escalated to.
func (s *Service) ballotOf(a Approval) quorum.Ballot {
	voters := s.approversOf(a)
	if !a.EscalatedAt.IsZero() {
		voters = slices.Concat(voters, a.EscalateTo)
	}
	return quorum.Ballot{Voters: voters, Requester: a.Requester, SelfApprove: a.SelfApprove}
}

// personOf is the person identity belongs to (Options.People), or the
// identity itself.
func (s *Service) personOf(identity string) string {
	return quorum.People(s.o.People).PersonOf(identity)
}

// RulesFromConfig turns approvals.rules into Rules, group:NAME entries
// expanded from approvals.groups, and approvals.people into the identity
// → person map of Options.People (quorum.FromConfig).
func RulesFromConfig(c config.Approvals) ([]Rule, map[string]string) {
	rules, people := quorum.FromConfig(c)
	return rules, people
}
