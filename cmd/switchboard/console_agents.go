package main

import (
	"sort"

	"github.com/switchboard-chat/switchboard/bot/console"
	"github.com/switchboard-chat/switchboard/tools"
)

// agentTools is one built agent's tool policy and gate, kept for the
// console's Agents page.
type agentTools struct {
	name, description, model, provider string
	allowed                            *tools.Allower
	classes                            map[string]string
	reg                                *tools.Registry
}

// consoleAgents lists every agent with the tools its policy offers now
// (MCP and custom tools included, as the registry holds them), each with
// its side-effect class and what the gate does with that class.
func (d *daemon) consoleAgents() []console.Agent {
	out := make([]console.Agent, 0, len(d.agentTools))
	for i, a := range d.agentTools {
		ag := console.Agent{Name: a.name, Description: a.description, Model: a.model, Provider: a.provider, Default: i == 0}
		for name := range a.allowed.Set() {
			t, ok := a.reg.Get(name)
			if !ok {
				continue
			}
			class := t.SideEffect().String()
			mode := a.classes[class]
			switch _, self := t.(tools.SelfApproving); {
			case self:
				mode = console.ModeSelf // exec asks per command (exec.approval), cron per job
			case mode == "":
				mode = tools.DecisionAsk // the gate asks for a class it has no decision for
			}
			ag.Tools = append(ag.Tools, console.AgentTool{Name: name, Class: class, Mode: mode})
		}
		sort.Slice(ag.Tools, func(i, j int) bool { return ag.Tools[i].Name < ag.Tools[j].Name })
		out = append(out, ag)
	}
	return out
}
