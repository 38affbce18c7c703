package bot

import "context"

// What the admin API (bot/admin) reads of the Router and asks it to do.

// CustomToolSpec is a custom tool as /tools add and the admin API take it.
type CustomToolSpec = customToolJSON

// AgentInfo describes the configured agents, as /agents shows them.
func (r *Router) AgentInfo() []AgentInfo { return r.opts.AgentInfo }

// DefaultAgent names the agent that answers where no binding chooses one.
func (r *Router) DefaultAgent() string { return r.opts.AgentName }

// CustomTools are the custom tools' options the Router was given.
func (r *Router) CustomTools() CustomToolOptions { return r.opts.CustomTools }

// AddCustomTool stores and installs spec on behalf of by, as /tools add
// does; the text says what happened (or why not, with the error).
func (r *Router) AddCustomTool(ctx context.Context, spec CustomToolSpec, by string) (string, error) {
	return r.addCustomTool(ctx, spec, by)
}
