package config

import (
	"fmt"
	"slices"
	"strings"
)

// validateApprovalRules checks approvals.groups, approvals.people and
// approvals.rules.
func (c *Config) validateApprovalRules(add func(string, ...any)) {
	a := c.Approvals
	for name, ids := range a.Groups {
		if name == "" || strings.ContainsAny(name, ": \t") {
			add("approvals.groups: %q is not a group name; use letters, digits, - or _ (e.g. oncall)", name)
		}
		checkIdentities(add, "approvals.groups."+name, ids)
	}
	personOf := map[string]string{}
	for _, name := range sortedKeys(a.People) {
		checkIdentities(add, "approvals.people."+name, a.People[name])
		for _, id := range a.People[name] {
			if other, dup := personOf[id]; dup && other != name {
				add("approvals.people: %q is listed for both %s and %s; an identity belongs to one person", id, other, name)
			}
			personOf[id] = name
		}
	}
	for i, r := range a.Rules {
		c.checkApprovalRule(add, fmt.Sprintf("approvals.rules[%d]", i), r, personOf)
	}
}

// checkApprovalRule checks one approvals.rules entry; personOf maps each
// identity of approvals.people to its person.
func (c *Config) checkApprovalRule(add func(string, ...any), key string, r ApprovalRule, personOf map[string]string) {
	for _, t := range r.Tools {
		if g, isGroup := strings.CutPrefix(t, "group:"); strings.TrimSpace(t) == "" || (isGroup && g == "") {
			add("%s.tools: %q is not a tool name or group:NAME (e.g. exec, group:fs)", key, t)
		}
	}
	classes := make([]string, 0, len(SideEffectClasses))
	for class := range SideEffectClasses {
		classes = append(classes, class)
	}
	slices.Sort(classes)
	for _, class := range r.Classes {
		if _, ok := SideEffectClasses[class]; !ok {
			add("%s.classes: %q is not a side-effect class; classes are %s", key, class, strings.Join(classes, ", "))
		}
	}
	names := c.AgentNames()
	for _, agent := range r.Agents {
		if !slices.Contains(names, agent) {
			add("%s.agents names unknown agent %q; agents are %s", key, agent, strings.Join(names, ", "))
		}
	}
	if r.Quorum < 0 {
		add("%s.quorum must be 1 or more (got %d); leave it out for one approver", key, r.Quorum)
	}
	approvers := orDefault(r.Approvers, c.Approvals.Approvers)
	ids := c.checkApproverList(add, key+".approvers", approvers)
	if people := countPeople(ids, personOf); r.Quorum > people {
		add("%s.quorum %d needs more approvers than it has: %d distinct people (approvals.people maps one person's identities); add approvers or lower the quorum",
			key, r.Quorum, people)
	}
	switch {
	case r.EscalateAfter < 0:
		add("%s.escalate_after must be a positive duration (e.g. 5m; got %s)", key, r.EscalateAfter)
	case r.EscalateAfter > 0 && len(r.EscalateTo) == 0:
		add("%s.escalate_after is set but escalate_to is empty; name who to ask then (identities or group:NAME)", key)
	case r.EscalateAfter == 0 && len(r.EscalateTo) > 0:
		add("%s.escalate_to is set but escalate_after is not; say after how long (e.g. escalate_after: 5m)", key)
	case r.EscalateAfter > 0 && c.Approvals.Timeout > 0 && r.EscalateAfter >= c.Approvals.Timeout:
		add("%s.escalate_after (%s) must be shorter than approvals.timeout (%s), or the request expires first", key, r.EscalateAfter, c.Approvals.Timeout)
	}
	c.checkApproverList(add, key+".escalate_to", r.EscalateTo)
}

// orDefault returns list, or fallback when list is empty.
func orDefault(list, fallback []string) []string {
	if len(list) == 0 {
		return fallback
	}
	return list
}

// checkApproverList checks identities and group:NAME entries and returns
// the identities they stand for.
func (c *Config) checkApproverList(add func(string, ...any), key string, list []string) []string {
	var ids []string
	for _, entry := range list {
		if g, isGroup := strings.CutPrefix(entry, "group:"); isGroup {
			members, ok := c.Approvals.Groups[g]
			if !ok {
				known := sortedKeys(c.Approvals.Groups)
				add("%s: group %q is not in approvals.groups (groups are %s); define it there or list identities", key, g, orNone(known))
			}
			ids = append(ids, members...)
			continue
		}
		checkIdentities(add, key, []string{entry})
		ids = append(ids, entry)
	}
	return ids
}

// countPeople counts the distinct people among ids: an identity of
// approvals.people is its person, any other identity a person of its own.
func countPeople(ids []string, personOf map[string]string) int {
	seen := map[string]bool{}
	for _, id := range ids {
		p := id
		if name, ok := personOf[id]; ok {
			p = "person:" + name
		}
		seen[p] = true
	}
	return len(seen)
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// orNone joins names, or says "none".
func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
