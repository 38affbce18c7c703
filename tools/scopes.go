package tools

import "strings"

// Session scopes of the work agents do for each other. A session key is
// "agent/scope"; a chat session's scope is the chat's address
// ("telegram:42"). Work done on behalf of a conversation keeps that
// conversation — its origin — in its scope, so any replica (and recovery
// after a crash) knows where approvals go and whom results reach:
//
//	team:<team>:<origin>     a teammate's session working for origin
//	sub:<id>:<parent key>    a subagent of the session <parent key>
const (
	teamScopePrefix = "team:"
	subScopePrefix  = "sub:"
)

// ScopeOf returns the scope of session key s (what follows the agent).
func ScopeOf(s string) string {
	_, scope, _ := strings.Cut(s, "/")
	return scope
}

// AgentOf returns the agent of session key s.
func AgentOf(s string) string {
	agent, _, _ := strings.Cut(s, "/")
	return agent
}

// TeamScope is the scope of a teammate's session in team, working for the
// conversation at origin.
func TeamScope(team, origin string) string { return teamScopePrefix + team + ":" + origin }

// ParseTeamScope splits a TeamScope; ok is false for any other scope.
func ParseTeamScope(scope string) (team, origin string, ok bool) {
	rest, ok := strings.CutPrefix(scope, teamScopePrefix)
	if !ok {
		return "", "", false
	}
	team, origin, ok = strings.Cut(rest, ":")
	return team, origin, ok && team != "" && origin != ""
}

// SubScope is the scope of subagent id of the session parent.
func SubScope(id, parent string) string { return subScopePrefix + id + ":" + parent }

// ParseSubScope splits a SubScope; ok is false for any other scope.
func ParseSubScope(scope string) (id, parent string, ok bool) {
	rest, ok := strings.CutPrefix(scope, subScopePrefix)
	if !ok {
		return "", "", false
	}
	id, parent, ok = strings.Cut(rest, ":")
	return id, parent, ok && id != "" && strings.Contains(parent, "/")
}

// OriginOf returns the conversation a session ultimately works for: the
// chat (or job) scope of a chat session, of the conversation a teammate
// works for, or of a subagent's parent.
func OriginOf(session string) string {
	scope := ScopeOf(session)
	for range 8 { // scopes nest a few levels at most
		if _, parent, ok := ParseSubScope(scope); ok {
			scope = ScopeOf(parent)
			continue
		}
		if _, origin, ok := ParseTeamScope(scope); ok {
			return origin
		}
		return scope
	}
	return scope
}

// SubDepth is how many subagents deep session is: 0 for a chat or team
// session, 1 for a subagent of one, and so on.
func SubDepth(session string) int {
	n := 0
	for scope := ScopeOf(session); n < 8; n++ {
		_, parent, ok := ParseSubScope(scope)
		if !ok {
			break
		}
		scope = ScopeOf(parent)
	}
	return n
}
