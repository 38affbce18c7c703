package bot

import (
	"context"
	"fmt"
	"strings"

	"github.com/switchboard-chat/switchboard/channels"
)

// command is a chat command handled by the daemon itself, not the agent:
// a built-in one, or a feature's Command (see Register).
type command struct {
	name string
	help string
	run  func(r *Router, ctx context.Context, in channels.Inbound, args string) string
}

// commands lists the chat commands in the order /help shows them: the
// built-in ones, then those features registered.
func (r *Router) commands() []command {
	cmds := []command{
		{"help", "what I can do", (*Router).cmdHelp},
		{"whoami", "your identity as the bot sees it", (*Router).cmdWhoami},
		{"status", "agent and service status", (*Router).cmdStatus},
		{"agents", "the agents here: name, description, model", (*Router).cmdAgents},
		{"stop", "stop what I'm doing for this chat now (the messages sent meanwhile are still answered)", (*Router).cmdStop},
	}
	for _, c := range r.registered {
		cmds = append(cmds, command{c.Name, c.Help, func(r *Router, ctx context.Context, in channels.Inbound, args string) string {
			return c.Run(ctx, r, in, args)
		}})
	}
	return cmds
}

// parseCommand splits "/name@bot args" into name and args. Only a leading
// /word counts, so paths like "/usr/bin" in a question are not commands
// unless they happen to be a known command name.
func parseCommand(text string) (name, args string, ok bool) {
	if !strings.HasPrefix(text, "/") {
		return "", "", false
	}
	head, args, _ := strings.Cut(text[1:], " ")
	head, _, _ = strings.Cut(head, "@") // Telegram group form: /help@my_bot
	if head == "" {
		return "", "", false
	}
	for _, r := range head {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return "", "", false
		}
	}
	return strings.ToLower(head), strings.TrimSpace(args), true
}

// runCommand answers a known command and reports whether it was one.
func (r *Router) runCommand(ctx context.Context, in channels.Inbound, name, args string) bool {
	for _, c := range r.commands() {
		if c.name == name {
			// A command that answered on its own returns "".
			if text := c.run(r, ctx, in, args); text != "" {
				r.notify(ctx, in, text)
			}
			return true
		}
	}
	return false
}

func (r *Router) cmdHelp(context.Context, channels.Inbound, string) string {
	var b strings.Builder
	b.WriteString("I'm an AI agent in this chat. Write to me in plain words and I'll answer.\n\nCommands:\n")
	for _, c := range r.commands() {
		fmt.Fprintf(&b, "- /%s — %s\n", c.name, c.help)
	}
	return b.String()
}

func (r *Router) cmdWhoami(_ context.Context, in channels.Inbound, _ string) string {
	role := "user"
	if r.opts.Access.IsAdmin(in.Identity()) {
		role = "admin"
	}
	return fmt.Sprintf("You are `%s` (%s), role: %s.\nThis chat is `%s`.", in.Identity(), in.UserName, role, in.Address().String())
}

func (r *Router) cmdStatus(ctx context.Context, in channels.Inbound, _ string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Agent: %s\nSession: %s\n", r.agentFor(ctx, in.Address()), in.Address().String())
	if line := r.opts.Route.Describe(ctx, in.Address()); line != "" {
		b.WriteString(line + "\n")
	}
	if r.opts.Models != nil {
		if m, err := r.opts.Models.Describe(ctx, in.Address()); err == nil {
			b.WriteString("Model: " + m + "\n")
		}
	}
	if r.opts.Status != nil {
		for _, line := range r.opts.Status(ctx) {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}
