package skills

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/config"
)

// Chats tells which agent answers in a chat; the Router implements it.
type Chats interface {
	// AgentAt returns the name of the agent that answers at addr.
	AgentAt(ctx context.Context, addr channels.Address) string
}

// CommandOptions wire /skills.
type CommandOptions struct {
	Catalog *Catalog
	Store   Store
	Chats   Chats
	Logger  *slog.Logger
}

// usage is the /skills help text.
const usage = "Usage: /skills · /skills disable NAME · /skills enable NAME (admins)"

// Commands returns /skills, to register with the Router: the skills the
// chat's agent may see; admins turn one off or on for every agent.
func Commands(o CommandOptions) []bot.Command {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return []bot.Command{{
		Name: "skills",
		Help: "the skills this chat's agent may use; /skills disable NAME, /skills enable NAME (admins only)",
		Run: func(ctx context.Context, host bot.Host, in channels.Inbound, args string) string {
			fields := strings.Fields(args)
			switch {
			case len(fields) == 0:
				return o.list(ctx, in)
			case len(fields) == 2 && (fields[0] == "disable" || fields[0] == "enable"):
				if !host.IsAdmin(in.Identity()) {
					return "Only admins can turn skills off or on."
				}
				return o.setDisabled(ctx, in, fields[1], fields[0] == "disable")
			}
			return usage
		},
	}}
}

// list answers /skills.
func (o CommandOptions) list(ctx context.Context, in channels.Inbound) string {
	agent := o.Chats.AgentAt(ctx, in.Address())
	entries, err := o.Catalog.List(ctx, agent)
	if err != nil {
		o.Logger.Error("list skills", "agent", agent, "err", err)
		return "Could not list the skills right now (storage unavailable); try again in a moment."
	}
	if len(entries) == 0 {
		return fmt.Sprintf("Agent %s has no skills. Put skill folders (each with a SKILL.md) in skills.dirs, or let an agent publish one with publish_skill.", agent)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Skills of agent %s:", agent)
	for _, e := range entries {
		fmt.Fprintf(&b, "\n• %s (%s)", e.Name, e.Source())
		if e.Shadows > 0 {
			fmt.Fprintf(&b, " — shadows published v%d", e.Shadows)
		}
		if e.Disabled {
			b.WriteString(" — disabled")
		}
		b.WriteString(": " + clip(e.Description, 200))
	}
	b.WriteString("\n" + usage)
	return b.String()
}

// setDisabled answers /skills disable NAME and /skills enable NAME.
func (o CommandOptions) setDisabled(ctx context.Context, in channels.Inbound, name string, disabled bool) string {
	if !config.IsSkillName(name) {
		return fmt.Sprintf("%q is not a skill name. %s", clip(name, 80), usage)
	}
	if disabled {
		// Enabling stays possible for a skill that has gone since.
		exists, err := o.Catalog.Exists(ctx, name)
		if err != nil {
			o.Logger.Error("look up skill", "skill", name, "err", err)
			return "Could not change the skill right now (storage unavailable); try again in a moment."
		}
		if !exists {
			return fmt.Sprintf("There is no skill called %s; /skills lists them. Nothing changed.", name)
		}
	}
	changed, err := o.Store.SetSkillDisabled(ctx, name, disabled, in.Identity())
	if err != nil {
		o.Logger.Error("set skill state", "skill", name, "disabled", disabled, "err", err)
		return "Could not change the skill right now (storage unavailable); try again in a moment."
	}
	verb := map[bool]string{true: "disabled", false: "enabled"}[disabled]
	if !changed {
		return fmt.Sprintf("Skill %s was %s already.", name, verb)
	}
	o.Logger.Info("skill "+verb, "skill", name, "by", in.Identity())
	if disabled {
		return fmt.Sprintf("Skill %s is disabled for every agent: it is no longer listed, found or usable. /skills enable %s turns it on again.", name, name)
	}
	return fmt.Sprintf("Skill %s is enabled again.", name)
}
