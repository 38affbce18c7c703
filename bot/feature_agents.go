package bot

import (
	"context"
	"slices"

	"github.com/switchboard-chat/switchboard/channels"
)

// What the pipeline tells features about its agents: which one answers in
// a chat (the /context command edits that agent's files) and how they are
// described (the admin API lists them). Features ask through interfaces of
// their own, which these methods satisfy.

// AgentAt returns the name of the agent that answers at addr: the live
// handoff route's, else the first binding that matches, else the default
// agent.
func (r *Router) AgentAt(ctx context.Context, addr channels.Address) string {
	return r.agentFor(ctx, addr)
}

// DescribedAgents returns every agent with its description and model, as
// /agents shows them; empty when only the default agent is configured.
func (r *Router) DescribedAgents() []AgentInfo { return slices.Clone(r.opts.AgentInfo) }

// DefaultAgent returns the name of the agent that answers where no binding
// chooses another.
func (r *Router) DefaultAgent() string { return r.opts.AgentName }
