package bot

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/channels"
)

// Binding chooses the agent that answers in a chat: Chat is
// platform:chat[:thread]; a trailing * matches every address with that
// prefix ("slack:C01*", "telegram:*").
type Binding struct {
	Chat  string
	Agent string
}

// Matches reports whether the binding covers addr.
func (b Binding) Matches(addr channels.Address) bool {
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

// AgentRoute says which agent answers at a chat's address. The bindings
// alone (Directory) are the default; a feature may send a chat elsewhere
// for a while (bot/handoff).
type AgentRoute interface {
	// AgentAt returns the agent that answers at addr.
	AgentAt(ctx context.Context, addr channels.Address) string
	// Describe returns the line /status shows about how addr is routed, or
	// "" when its binding decides.
	Describe(ctx context.Context, addr channels.Address) string
}

// Directory says which agents exist and which one a chat's binding names.
type Directory struct {
	Default  string // answers where no binding matches
	Names    []string
	Bindings []Binding
}

var _ AgentRoute = Directory{}

// Bound returns the agent the bindings give addr (first match), else the
// default agent.
func (d Directory) Bound(addr channels.Address) string {
	for _, b := range d.Bindings {
		if b.Matches(addr) && slices.Contains(d.Names, b.Agent) {
			return b.Agent
		}
	}
	return d.Default
}

// AgentAt implements AgentRoute with the bindings alone.
func (d Directory) AgentAt(_ context.Context, addr channels.Address) string { return d.Bound(addr) }

// Describe implements AgentRoute: the binding decides, nothing to show.
func (Directory) Describe(context.Context, channels.Address) string { return "" }

// agentFor returns the name of the agent that answers at addr
// (Options.Route).
func (r *Router) agentFor(ctx context.Context, addr channels.Address) string {
	return r.opts.Route.AgentAt(ctx, addr)
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
