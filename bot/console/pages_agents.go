package console

import "net/http"

// Agent is a configured agent as the Agents page shows it.
type Agent struct {
	Name, Description, Model, Provider string
	// Default is the agent that answers where no binding names another.
	Default bool
	// Tools are the tools its policy offers now, by name.
	Tools []AgentTool
}

// AgentTool is one tool an agent is offered: its side-effect class and
// what tools.approvals (or the agent's own approvals) does with it.
type AgentTool struct {
	Name, Class string
	// Mode is allow, ask, deny, or ModeSelf.
	Mode string
}

// ModeSelf is the Mode of a tool that decides per call itself what to ask
// (exec per command under exec.approval and its guard, cron per job).
const ModeSelf = "self"

func (c *Console) agentsPage(w http.ResponseWriter, r *http.Request) {
	var list []Agent
	if c.o.Agents != nil {
		list = c.o.Agents()
	}
	c.render(w, r, http.StatusOK, "agents", page{Title: "Agents", Nav: "agents", Session: current(r), Data: list})
}
