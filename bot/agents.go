package bot

import (
	"context"
	"fmt"
	"strings"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/tools"
)

// Binding chooses the agent that answers in a chat: Chat is
// platform:chat[:thread]; a trailing * matches every address with that
// prefix ("slack:C01*", "telegram:*").
type Binding struct {
	Chat  string
	Agent string
}

// matches reports whether the binding covers addr.
func (b Binding) matches(addr channels.Address) bool {
	s := addr.String()
	if prefix, wild := strings.CutSuffix(b.Chat, "*"); wild {
		return strings.HasPrefix(s, prefix)
	}
	// A binding for a chat covers its threads too.
	return s == b.Chat || strings.HasPrefix(s, b.Chat+":")
}

// AgentInfo describes an agent for /agents.
type AgentInfo struct {
	Name        string
	Description string
	Model       string
}

// agentFor returns the name of the agent that answers at addr: the live
// handoff route's, else the first binding that matches, else the default
// agent.
func (r *Router) agentFor(ctx context.Context, addr channels.Address) string {
	if r.opts.Handoff != nil {
		return r.opts.Handoff.AgentAt(ctx, addr)
	}
	return r.directory().Bound(addr)
}

// directory describes the configured agents and bindings.
func (r *Router) directory() Directory {
	names := []string{r.opts.AgentName}
	for name := range r.opts.Agents {
		names = append(names, name)
	}
	return Directory{Default: r.opts.AgentName, Names: names, Bindings: r.opts.Bindings}
}

// runner returns the agent called name.
func (r *Router) runner(name string) (Runner, bool) {
	if name == r.opts.AgentName {
		return r.opts.Agent, r.opts.Agent != nil
	}
	a, ok := r.opts.Agents[name]
	return a, ok
}

// sessionKey is the session of the agent that answers at addr.
func (r *Router) sessionKey(ctx context.Context, addr channels.Address) string {
	return agentcore.SessionKey{Agent: r.agentFor(ctx, addr), Scope: addr.String()}.String()
}

// agentOfSession returns the agent a session key belongs to.
func (r *Router) agentOfSession(session string) string {
	if k, err := agentcore.ParseSessionKey(session); err == nil {
		return k.Agent
	}
	return r.opts.AgentName
}

func (r *Router) cmdAgents(ctx context.Context, in channels.Inbound, _ string) string {
	if len(r.opts.AgentInfo) == 0 {
		return "One agent answers here: " + r.opts.AgentName + "."
	}
	here := r.agentFor(ctx, in.Address())
	var b strings.Builder
	b.WriteString("Agents:\n")
	for _, a := range r.opts.AgentInfo {
		mark := ""
		if a.Name == here {
			mark = " ← answers in this chat"
		}
		desc := a.Description
		if desc == "" {
			desc = "no description"
		}
		fmt.Fprintf(&b, "- %s — %s (model %s)%s\n", a.Name, desc, a.Model, mark)
	}
	return b.String()
}

// cmdTasks lists the active tasks of the team of the chat's agent.
func (r *Router) cmdTasks(ctx context.Context, in channels.Inbound, _ string) string {
	if r.opts.Tasks == nil || r.opts.TeamOf == nil {
		return "There is no task board here."
	}
	agent := r.agentFor(ctx, in.Address())
	team, lead, ok := r.opts.TeamOf(agent)
	if !ok {
		return agent + " is not in a team, so there is no task board here (teams: in the config)."
	}
	tasks, err := r.opts.Tasks.ListTasks(ctx, team, tools.TaskFilter{})
	if err != nil {
		return "Could not read the task board right now (storage unavailable); try again later."
	}
	if len(tasks) == 0 {
		return fmt.Sprintf("Team %s (lead %s) has no open tasks.", team, lead)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Team %s (lead %s), open tasks:\n", team, lead)
	for _, t := range tasks {
		who := t.Owner
		if who == "" {
			who = t.Assignee
		}
		if who == "" {
			who = "unclaimed"
		}
		fmt.Fprintf(&b, "- #%d [%s] %s — %s, %d%%\n", t.ID, t.Status, t.Subject, who, t.Progress)
	}
	return b.String()
}
