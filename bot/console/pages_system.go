package console

import (
	"context"
	"net/http"
	"sort"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/tools/mcp"
)

// systemData is what the System page shows.
type systemData struct {
	Replica     string
	Leaderships []string
	Checks      []checkView
	MCP         []mcp.Status
	Replicas    []Replica
	ReplicasErr string
}

// checkView is one readiness check's result.
type checkView struct {
	Name, Why string
	OK        bool
}

func (c *Console) systemPage(w http.ResponseWriter, r *http.Request) {
	sys := c.o.System
	d := systemData{Replica: sys.Replica}
	if sys.Leaderships != nil {
		d.Leaderships = sys.Leaderships()
	}
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	var checks map[string]bot.Check
	if sys.Checks != nil {
		checks = sys.Checks()
	}
	failed := bot.RunChecks(ctx, checks)
	for name := range checks {
		why, down := failed[name]
		d.Checks = append(d.Checks, checkView{Name: name, OK: !down, Why: why})
	}
	sort.Slice(d.Checks, func(i, j int) bool { return d.Checks[i].Name < d.Checks[j].Name })
	if sys.MCP != nil {
		d.MCP = sys.MCP()
		sort.Slice(d.MCP, func(i, j int) bool { return d.MCP[i].Name < d.MCP[j].Name })
	}
	var err error
	if d.Replicas, err = c.o.Store.Replicas(ctx); err != nil {
		c.log.Error("console: list replicas", "err", err)
		d.ReplicasErr = "Could not list the replicas (storage unavailable)."
	}
	c.render(w, r, http.StatusOK, "system", page{Title: "System", Nav: "system", Session: current(r), Data: d})
}
