package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/tools"
)

// cmdContext shows and sets the agent's context files (admins only):
// /context, /context NAME, /context set NAME TEXT, /context clear NAME.
// The agent of this chat is the one changed; USER.md is the admin's own.
func (r *Router) cmdContext(ctx context.Context, in channels.Inbound, args string) string {
	if !r.opts.Access.IsAdmin(in.Identity()) {
		return "Only admins can see or change the agent's context files."
	}
	if r.opts.Docs == nil {
		return "Context files are not available here."
	}
	agent := r.agentFor(ctx, in.Address())
	fields := strings.Fields(args)
	scopeOf := func(name string) string {
		if name == "USER.md" {
			return tools.UserScope(in.Identity())
		}
		return ""
	}
	usage := "Usage: /context · /context NAME · /context set NAME TEXT · /context clear NAME (NAME: " +
		strings.Join(tools.ContextFiles, ", ") + ")"
	if len(fields) == 0 {
		found, err := r.opts.Docs.GetDocs(ctx, agent, []string{"", tools.UserScope(in.Identity())}, tools.ContextFiles)
		if err != nil {
			return "Could not read the context files right now (storage unavailable); try again later."
		}
		var b strings.Builder
		fmt.Fprintf(&b, "Context files of agent %s:\n", agent)
		for _, name := range tools.ContextFiles {
			if text, ok := found[scopeOf(name)][name]; ok {
				fmt.Fprintf(&b, "- %s (%d bytes)\n", name, len(text))
			} else {
				fmt.Fprintf(&b, "- %s (not set)\n", name)
			}
		}
		return b.String() + usage
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
	key := tools.DocKey{Agent: agent, Scope: scopeOf(name), Path: name}
	switch verb {
	case "show":
		text, err := r.opts.Docs.GetDoc(ctx, key)
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
		if err := r.opts.Docs.PutDoc(ctx, key, text); err != nil {
			return "Could not save " + name + " right now (storage unavailable); try again later."
		}
		r.log.Info("context file set", "agent", agent, "file", name, "by", in.Identity())
		return fmt.Sprintf("Saved %s for agent %s (%d bytes); it applies from the next message.", name, agent, len(text))
	default:
		if err := r.opts.Docs.PutDoc(ctx, key, ""); err != nil {
			return "Could not clear " + name + " right now (storage unavailable); try again later."
		}
		r.log.Info("context file cleared", "agent", agent, "file", name, "by", in.Identity())
		return fmt.Sprintf("Cleared %s for agent %s.", name, agent)
	}
}
