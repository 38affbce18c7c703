package bot

import (
	"context"
	"fmt"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/channels"
)

// Host is what the pipeline offers a feature's chat commands. The Router
// implements it; a command gets it instead of the whole Router, so a
// feature depends only on what it uses.
type Host interface {
	// IsAdmin reports whether identity (platform:user_id) is a configured
	// admin.
	IsAdmin(identity string) bool
}

// Agents finds the agent that runs a feature's work (a job's prompt) by
// the name the feature stored; the Router implements it with the agents it
// was given, so a feature runs exactly the agents chats do.
type Agents interface {
	// Agent returns the agent called name and its runner; "" is the
	// default agent. ok is false when no such agent is configured.
	Agent(name string) (agent string, run Runner, ok bool)
}

// Command is a chat command a feature registers with the Router. Run
// answers "/Name args" from in; its text is sent back to the chat, and ""
// means the command answered on its own. Run is called after the access
// check and the rate limits, like every command.
type Command struct {
	// Name is the command without its slash, in lower case.
	Name string
	// Help is the one line /help shows after "/Name — ".
	Help string
	// Run answers the command; args is the text after the name, trimmed.
	Run func(ctx context.Context, host Host, in channels.Inbound, args string) string
}

// ModelChooser picks the model a chat's runs use (/model). The Router asks
// it at the start of every run, so a switch on one replica holds on all.
type ModelChooser interface {
	// ModelFor returns the model runs in chat use, nil for their agent's
	// own.
	ModelFor(ctx context.Context, chat channels.Address) (*agentcore.ModelChoice, error)
	// Describe names chat's model for /status ("smart: big-1").
	Describe(ctx context.Context, chat channels.Address) (string, error)
}

var (
	_ Host   = (*Router)(nil)
	_ Agents = (*Router)(nil)
)

// IsAdmin implements Host.
func (r *Router) IsAdmin(identity string) bool { return r.opts.Access.IsAdmin(identity) }

// Agent implements Agents.
func (r *Router) Agent(name string) (string, Runner, bool) {
	if name == "" {
		name = r.opts.AgentName
	}
	run, ok := r.runner(name)
	return name, run, ok
}

// Register adds a feature's chat commands. /help lists them after the
// built-in ones, in the order they were registered. Call it after
// NewRouter and before the first Handle: the command list is read without
// a lock. A name already taken is refused, so a feature cannot shadow
// another's command.
func (r *Router) Register(cmds ...Command) error {
	for _, c := range cmds {
		if c.Name == "" || c.Run == nil {
			return fmt.Errorf("register command %q: it needs a name and a Run", c.Name)
		}
		if r.isCommand(c.Name) {
			return fmt.Errorf("register command /%s: the name is taken", c.Name)
		}
		r.registered = append(r.registered, c)
	}
	return nil
}
