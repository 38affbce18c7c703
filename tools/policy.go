package tools

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// The tool profiles a policy may start from.
const (
	ProfileFull      = "full"      // every registered tool
	ProfileCoding    = "coding"    // files, runtime, sessions, memory, web, knowledge
	ProfileMessaging = "messaging" // messaging, web, sessions
	ProfileMinimal   = "minimal"   // session_status only
)

// Groups are the named sets of built-in tools policy lists may refer to as
// "group:NAME". Tools outside this table join groups through the Grouped
// interface (MCP servers' tools: "mcp" and "mcp:SERVER"; custom tools:
// "custom").
var Groups = map[string][]string{
	"fs":         {"read_file", "write_file", "edit", "list_files", "search", "glob"},
	"runtime":    {"exec", "credentialed_exec", "process"},
	"web":        {"web_fetch", "web_search"},
	"memory":     {"memory_search", "memory_get"},
	"sessions":   {"sessions_list", "sessions_history", "sessions_send", "spawn", "session_status"},
	"automation": {"cron", "datetime"},
	"messaging":  {"message", "create_forum_topic", "send_file", "ask_user"},
	"teams":      {"handoff", "team_tasks", "team_message"},
	"media":      {"read_image", "read_audio", "read_document", "read_video", "create_image", "tts"},
	"knowledge":  {"skill_search", "use_skill", "publish_skill", "knowledge_graph_search"},
}

// Planned are the tools of the seeds' inventory (and the contract) that are
// not built yet, by the group the contract puts them in. Policy lists may
// name them, so a configuration written for them keeps working when they
// land; until then they match nothing.
var Planned = map[string][]string{
	"media": {"create_audio", "create_video"},
	"":      {"openai_compat_call", "workspace_dir"},
}

// profiles are the groups (and tools) each profile allows; full is absent
// because it allows everything.
var profiles = map[string][]string{
	ProfileCoding:    {"group:fs", "group:runtime", "group:sessions", "group:memory", "group:web", "group:knowledge"},
	ProfileMessaging: {"group:messaging", "group:web", "group:sessions"},
	ProfileMinimal:   {"session_status"},
}

// Subagents never get these tools, at any depth; a subagent at the
// deepest level allowed also loses the leaf list, so it cannot go deeper.
var (
	SubagentDeny = []string{"session_status", "cron", "memory_search", "memory_get", "knowledge_graph_search", "sessions_send"}
	LeafDeny     = []string{"sessions_list", "sessions_history", "spawn"}
)

// Grouped is implemented by tools that belong to groups beyond the
// built-in table (an MCP server's tools, custom tools).
type Grouped interface {
	Groups() []string
}

// PolicyRules is one level of tool policy (global, or an agent's): a
// profile to start from, allow lists that narrow, deny lists that remove,
// and also_allow lists that add back. Entries are tool names or
// "group:NAME". ByProvider holds overrides for agents on one LLM provider.
type PolicyRules struct {
	Profile    string
	Allow      []string
	Deny       []string
	AlsoAllow  []string
	ByProvider map[string]PolicyRules
}

// Policy decides which tools one agent's model is offered: the global and
// agent rules for the agent's provider, a per-chat allow list, and the
// subagent limits.
type Policy struct {
	Global   PolicyRules
	Agent    PolicyRules
	Provider string
	// ChatAllow, when not empty, narrows the result for one chat or
	// thread (step 7).
	ChatAllow []string
	// Depth is the subagent depth (0: not a subagent); MaxDepth the
	// deepest a subagent may be.
	Depth, MaxDepth int
}

// Allowed returns the subset of tools (by name) the policy offers, in the
// pipeline's order: profile (the agent's, else the global one; a
// provider's override first), global allow, provider allow, agent allow,
// agent+provider allow, chat allow; then the deny lists (global, agent,
// and their provider's); then also_allow (global, agent) adds tools back;
// then the subagent deny lists.
func (p Policy) Allowed(all []Tool) map[string]bool {
	names := map[string][]string{} // tool → its groups
	for _, t := range all {
		names[t.Name()] = groupsOf(t)
	}
	set := map[string]bool{}
	for n := range names {
		set[n] = true
	}
	gp := p.Global.ByProvider[p.Provider]
	ap := p.Agent.ByProvider[p.Provider]
	profile := firstNonEmpty(ap.Profile, p.Agent.Profile, gp.Profile, p.Global.Profile)
	if list, ok := profiles[profile]; ok {
		set = intersect(set, expand(list, names))
	}
	for _, allow := range [][]string{p.Global.Allow, gp.Allow, p.Agent.Allow, ap.Allow, p.ChatAllow} {
		if len(allow) > 0 {
			set = intersect(set, expand(allow, names))
		}
	}
	for _, deny := range [][]string{p.Global.Deny, gp.Deny, p.Agent.Deny, ap.Deny} {
		for n := range expand(deny, names) {
			delete(set, n)
		}
	}
	for _, also := range [][]string{p.Global.AlsoAllow, gp.AlsoAllow, p.Agent.AlsoAllow, ap.AlsoAllow} {
		for n := range expand(also, names) {
			set[n] = true
		}
	}
	if p.Depth > 0 {
		deny := SubagentDeny
		if p.MaxDepth > 0 && p.Depth >= p.MaxDepth {
			deny = append(append([]string{}, deny...), LeafDeny...)
		}
		for _, n := range deny {
			delete(set, n)
		}
	}
	return set
}

// Allower applies a Policy to a registry whose tools come and go (MCP
// servers connect and drop): the allowed set is worked out again when the
// registry changes, so a tool added later is judged by the same rules.
type Allower struct {
	Policy   Policy
	Registry *Registry

	mu      sync.Mutex
	version uint64
	allowed map[string]bool
}

// Allows reports whether the policy offers t.
func (a *Allower) Allows(t Tool) bool {
	return a.Set()[t.Name()]
}

// Set returns the names of the tools the policy offers now.
func (a *Allower) Set() map[string]bool {
	v := a.Registry.Version()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.allowed == nil || a.version != v {
		a.allowed, a.version = a.Policy.Allowed(a.Registry.All()), v
	}
	return a.allowed
}

// GroupsOf returns the groups t belongs to: the built-in Groups naming it
// and any it declares itself (Grouped).
func GroupsOf(t Tool) []string { return groupsOf(t) }

// groupsOf returns the groups t belongs to.
func groupsOf(t Tool) []string {
	var out []string
	for g, members := range Groups {
		for _, m := range members {
			if m == t.Name() {
				out = append(out, g)
			}
		}
	}
	if gt, ok := t.(Grouped); ok {
		out = append(out, gt.Groups()...)
	}
	return out
}

// expand turns a list of names and group:NAME entries into the registered
// tools it names.
func expand(list []string, tools map[string][]string) map[string]bool {
	out := map[string]bool{}
	for _, entry := range list {
		group, isGroup := strings.CutPrefix(entry, "group:")
		for name, groups := range tools {
			if !isGroup && name == entry {
				out[name] = true
			}
			if isGroup {
				for _, g := range groups {
					if g == group {
						out[name] = true
					}
				}
			}
		}
	}
	return out
}

func intersect(a, b map[string]bool) map[string]bool {
	out := map[string]bool{}
	for n := range a {
		if b[n] {
			out[n] = true
		}
	}
	return out
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// KnownTools lists every tool name policy lists may use: the built-in
// inventory, the Planned tools (so a config written for them keeps
// working) and extra names (the configured custom tools).
func KnownTools(extra ...string) []string {
	seen := map[string]bool{}
	for _, table := range []map[string][]string{Groups, Planned} {
		for _, members := range table {
			for _, m := range members {
				seen[m] = true
			}
		}
	}
	for _, e := range extra {
		seen[e] = true
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ValidateRules reports every unknown profile, tool and group in r (where
// names the level, e.g. "tools" or "agents[ops].tools"), with the name
// suggest picks among the known ones as a hint (nil: no hints). Names of
// MCP tools (mcp_SERVER_TOOL) and groups mcp and mcp:SERVER are accepted as
// written: servers may be added later. Planned tools and groups are known.
func ValidateRules(where string, r PolicyRules, known []string, suggest func(string, []string) string) []error {
	var errs []error
	if r.Profile != "" {
		if _, ok := profiles[r.Profile]; !ok && r.Profile != ProfileFull {
			errs = append(errs, fmt.Errorf("%s.profile: unknown profile %q; use full, coding, messaging or minimal", where, r.Profile))
		}
	}
	groups := []string{"mcp", "custom"}
	for _, table := range []map[string][]string{Groups, Planned} {
		for g := range table {
			if g != "" && !contains(groups, g) {
				groups = append(groups, g)
			}
		}
	}
	sort.Strings(groups)
	isKnown := func(name string) bool {
		for _, k := range known {
			if k == name {
				return true
			}
		}
		return strings.HasPrefix(name, "mcp_")
	}
	check := func(list string, entries []string) {
		for _, e := range entries {
			group, isGroup := strings.CutPrefix(e, "group:")
			switch {
			case isGroup && (contains(groups, group) || strings.HasPrefix(group, "mcp:")):
			case isGroup:
				errs = append(errs, fmt.Errorf("%s.%s: unknown group %q%s", where, list, e, hint(group, groups, "group:", suggest)))
			case !isKnown(e):
				errs = append(errs, fmt.Errorf("%s.%s: unknown tool %q%s", where, list, e, hint(e, known, "", suggest)))
			}
		}
	}
	check("allow", r.Allow)
	check("deny", r.Deny)
	check("also_allow", r.AlsoAllow)
	providers := make([]string, 0, len(r.ByProvider))
	for name := range r.ByProvider {
		providers = append(providers, name)
	}
	sort.Strings(providers)
	for _, name := range providers {
		sub := r.ByProvider[name]
		if len(sub.ByProvider) > 0 {
			errs = append(errs, fmt.Errorf("%s.by_provider.%s: by_provider cannot nest", where, name))
		}
		errs = append(errs, ValidateRules(where+".by_provider."+name, sub, known, suggest)...)
	}
	return errs
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// hint returns `; did you mean "X"?` for the name suggest picks, or "".
func hint(s string, known []string, prefix string, suggest func(string, []string) string) string {
	if suggest == nil {
		return ""
	}
	if best := suggest(s, known); best != "" {
		return fmt.Sprintf("; did you mean %q?", prefix+best)
	}
	return ""
}
