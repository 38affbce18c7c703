package customtools

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
)

// Commands returns the chat commands of the custom-tools feature, to
// register with the Router (bot.Router.Register): /tools on c, for admins
// only.
func Commands(c *Catalog) []bot.Command {
	return []bot.Command{{
		Name: "tools",
		Help: "custom tools: /tools, /tools add {JSON}, /tools remove NAME (admins only)",
		Run: func(ctx context.Context, host bot.Host, in channels.Inbound, args string) string {
			if !host.IsAdmin(in.Identity()) {
				return "Only admins can manage custom tools."
			}
			return c.command(ctx, in, args)
		},
	}}
}

// command answers /tools [add JSON | remove NAME] for an admin.
func (c *Catalog) command(ctx context.Context, in channels.Inbound, args string) string {
	if !c.canAdd() {
		return "Custom tools are not available here."
	}
	verb, rest, _ := strings.Cut(strings.TrimSpace(args), " ")
	switch verb {
	case "", "list":
		return c.listText(ctx)
	case "add":
		var d Definition
		if err := json.Unmarshal([]byte(rest), &d); err != nil {
			return `Usage: /tools add {"name": "dns_lookup", "description": "…", "parameters": {"type": "object", ` +
				`"properties": {"domain": {"type": "string"}}}, "command": "dig +short {{.domain}}", "timeout": "10s", "env": {}}`
		}
		msg, _ := c.Add(ctx, d, in.Identity())
		return msg
	case "remove":
		name := strings.TrimSpace(rest)
		found, err := c.Remove(ctx, name, in.Identity())
		if err != nil {
			c.o.Logger.Error("delete custom tool", "tool", name, "err", err)
			return "Could not remove it right now; try again in a minute."
		}
		if !found {
			return fmt.Sprintf("There is no stored custom tool %q (tools from the config file are removed there).", name)
		}
		return "Removed custom tool " + name + "."
	}
	return "Usage: /tools, /tools add {JSON}, /tools remove NAME."
}

// listText is the answer of /tools: the stored tools by name, never the
// env values.
func (c *Catalog) listText(ctx context.Context) string {
	list, err := c.List(ctx)
	if err != nil {
		c.o.Logger.Error("list custom tools", "err", err)
		return "Could not read the custom tools right now; try again in a minute."
	}
	if len(list) == 0 {
		return "No custom tools were added here (tools from the config file are not listed). Add one with /tools add {JSON}."
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	var b strings.Builder
	b.WriteString("Custom tools:\n")
	for _, t := range list {
		fmt.Fprintf(&b, "- %s: %s — `%s`", t.Name, t.Description, t.Command)
		if len(t.Env) > 0 {
			fmt.Fprintf(&b, " (%d env values, encrypted)", len(t.Env))
		}
		b.WriteString("\n")
	}
	return b.String()
}
