package contextfiles

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/tools"
)

// Chats tells which agent answers in a chat; the Router implements it.
type Chats interface {
	// AgentAt returns the name of the agent that answers at addr.
	AgentAt(ctx context.Context, addr channels.Address) string
}

// Options wire /context.
type Options struct {
	// Docs keeps the agents' context files; nil: /context is off.
	Docs   tools.DocStore
	Chats  Chats
	Logger *slog.Logger
}

// Commands returns the chat commands of the context-files feature, to
// register with the Router (bot.Router.Register): /context, for admins
// only.
func Commands(o Options) []bot.Command {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return []bot.Command{{
		Name: "context",
		Help: "the agent's context files: /context, /context NAME, /context set NAME TEXT, /context clear NAME (admins only)",
		Run: func(ctx context.Context, host bot.Host, in channels.Inbound, args string) string {
			if !host.IsAdmin(in.Identity()) {
				return "Only admins can see or change the agent's context files."
			}
			if o.Docs == nil {
				return "Context files are not available here."
			}
			return o.command(ctx, in, args)
		},
	}}
}

// usage is the /context help text.
var usage = "Usage: /context · /context NAME · /context set NAME TEXT · /context clear NAME (NAME: " +
	strings.Join(tools.ContextFiles, ", ") + ")"

// scopeOf is the scope of file name for the person in: USER.md is theirs,
// the others the agent's.
func scopeOf(in channels.Inbound, name string) string {
	if name == "USER.md" {
		return tools.UserScope(in.Identity())
	}
	return ""
}

// command answers /context, /context NAME, /context set NAME TEXT and
// /context clear NAME for an admin, on the agent of their chat.
func (o Options) command(ctx context.Context, in channels.Inbound, args string) string {
	agent := o.Chats.AgentAt(ctx, in.Address())
	fields := strings.Fields(args)
	if len(fields) == 0 {
		return o.list(ctx, in, agent)
	}
	verb, name := "show", fields[0]
	if fields[0] == "set" || fields[0] == "clear" {
		if len(fields) < 2 {
			return usage
		}
		verb, name = fields[0], fields[1]
	}
	if !slices.Contains(tools.ContextFiles, name) {
		return fmt.Sprintf("%q is not a context file. %s", name, usage)
	}
	key := tools.DocKey{Agent: agent, Scope: scopeOf(in, name), Path: name}
	switch verb {
	case "show":
		text, err := o.Docs.GetDoc(ctx, key)
		if errors.Is(err, tools.ErrNoDoc) {
			return name + " is not set for agent " + agent + "."
		}
		if err != nil {
			return "Could not read " + name + " right now (storage unavailable); try again later."
		}
		return fmt.Sprintf("%s of agent %s:\n%s", name, agent, text)
	case "set":
		_, rest, _ := strings.Cut(args, name)
		text := strings.TrimSpace(rest)
		if text == "" {
			return "Give the text: /context set " + name + " TEXT (use /context clear " + name + " to remove it)."
		}
		if err := o.Docs.PutDoc(ctx, key, text); err != nil {
			return "Could not save " + name + " right now (storage unavailable); try again later."
		}
		o.Logger.Info("context file set", "agent", agent, "file", name, "by", in.Identity())
		return fmt.Sprintf("Saved %s for agent %s (%d bytes); it applies from the next message.", name, agent, len(text))
	default:
		if err := o.Docs.PutDoc(ctx, key, ""); err != nil {
			return "Could not clear " + name + " right now (storage unavailable); try again later."
		}
		o.Logger.Info("context file cleared", "agent", agent, "file", name, "by", in.Identity())
		return fmt.Sprintf("Cleared %s for agent %s.", name, agent)
	}
}

// list answers /context: each context file of agent, set or not, and the
// usage.
func (o Options) list(ctx context.Context, in channels.Inbound, agent string) string {
	found, err := o.Docs.GetDocs(ctx, agent, []string{"", tools.UserScope(in.Identity())}, tools.ContextFiles)
	if err != nil {
		return "Could not read the context files right now (storage unavailable); try again later."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Context files of agent %s:\n", agent)
	for _, name := range tools.ContextFiles {
		if text, ok := found[scopeOf(in, name)][name]; ok {
			fmt.Fprintf(&b, "- %s (%d bytes)\n", name, len(text))
		} else {
			fmt.Fprintf(&b, "- %s (not set)\n", name)
		}
	}
	return b.String() + usage
}
