package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchboard-chat/switchboard/bot/access"
	adminapi "github.com/switchboard-chat/switchboard/bot/admin"
	"github.com/switchboard-chat/switchboard/bot/console"
	"github.com/switchboard-chat/switchboard/bot/jobs"
	"github.com/switchboard-chat/switchboard/tools/mcp"
)

// consoleJobRuns is how many of each job's newest runs the console shows.
const consoleJobRuns = 5

// wireConsole makes the admin console, served at /admin on every replica's
// HTTP server (its state is in PostgreSQL), and registers /login and
// /logout.
func (d *daemon) wireConsole() error {
	d.console = console.New(console.Options{
		Store: d.st.db, PublicURL: d.cfg.HTTP.PublicURL, AdminToken: d.cfg.HTTP.AdminToken,
		IsAdmin: d.router.IsAdmin, Approvals: d.approvals, Jobs: consoleJobs{d}, Agents: d.consoleAgents, Logger: d.log,
		Access: consoleAccess{AccessRequests: d.st.db, Service: d.access},
		System: console.System{
			Replica: d.replica, Checks: d.checks, Leaderships: d.leaderships,
			MCP: func() []mcp.Status { return d.mcp.Statuses() },
		},
	})
	if err := d.router.Register(d.console.Commands()...); err != nil {
		return fmt.Errorf("admin console: %w", err)
	}
	return nil
}

// consoleAccess gives the console the pending requests from the store and
// the decisions and revocations of the access feature.
type consoleAccess struct {
	adminapi.AccessRequests
	*access.Service
}

// consoleJobs gives the console the jobs feature, through the scheduler's
// watched store (a resumed job is scheduled at once), in the console's
// own types.
type consoleJobs struct{ d *daemon }

func (j consoleJobs) store() jobs.Store { return j.d.sched.WatchJobs(j.d.st.db) }

// List implements console.Jobs.
func (j consoleJobs) List(ctx context.Context) ([]console.Job, error) {
	list, err := jobs.Overviews(ctx, j.store(), j.d.jobUsage, consoleJobRuns)
	if err != nil {
		return nil, err
	}
	out := make([]console.Job, 0, len(list))
	for _, o := range list {
		cj := console.Job{Name: o.Job.Name, Schedule: o.Job.Schedule, Timezone: o.Job.Timezone, Agent: o.Job.Agent,
			Prompt: o.Job.Prompt, PostTo: o.Job.Target.String(), Source: o.Job.Source, Enabled: o.Job.Enabled,
			Next: o.Next, NextNote: o.NextNote}
		for _, r := range o.Runs {
			cj.Runs = append(cj.Runs, console.JobRun{ScheduledAt: r.ScheduledAt, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt,
				Status: r.Status, Attempts: r.Attempts, Tokens: r.TokensIn + r.TokensOut, Error: r.Error})
			cj.Tokens += int64(r.TokensIn + r.TokensOut)
		}
		if o.Usage != nil {
			cj.Tokens, cj.Cost = o.Usage.Tokens, o.Usage.CostDollars
		}
		out = append(out, cj)
	}
	return out, nil
}

// SetEnabled implements console.Jobs.
func (j consoleJobs) SetEnabled(ctx context.Context, name string, enabled bool) error {
	return j.store().SetJobEnabled(ctx, name, enabled)
}

// RunNow implements console.Jobs.
func (j consoleJobs) RunNow(ctx context.Context, name string) error {
	err := j.d.sched.RunNow(ctx, name)
	if errors.Is(err, jobs.ErrSlotBusy) {
		return console.ErrJobBusy
	}
	return err
}
