package main

import (
	"context"

	"github.com/switchboard-chat/switchboard/bot/subagents"
	"github.com/switchboard-chat/switchboard/tools"
)

// wireSubagents builds the subagents service, which owns the subagents'
// sessions the router runs and serves the spawn tool.
func (d *daemon) wireSubagents() {
	sc := d.cfg.Subagents
	d.subagents = subagents.New(d.router, subagents.Options{Store: d.st.rdb, MaxConcurrent: sc.MaxConcurrent, MaxDepth: sc.MaxDepth,
		MaxChildren: sc.MaxChildren, ArchiveAfter: sc.ArchiveAfter, History: d.st.db, Logger: d.log})
	d.router.RunInBackground(d.subagents)
}

// lazySpawner hands the spawn tool to the subagents service, which is
// built after the tools (it needs the router, which needs the agents,
// which need the tools).
type lazySpawner struct{ d *daemon }

func (l lazySpawner) Spawn(ctx context.Context, call tools.Call, task, label string, wait bool) (tools.Subagent, error) {
	return l.d.subagents.Spawn(ctx, call, task, label, wait)
}

func (l lazySpawner) Subagents(ctx context.Context, call tools.Call) ([]tools.Subagent, error) {
	return l.d.subagents.Subagents(ctx, call)
}

func (l lazySpawner) CancelSubagents(ctx context.Context, call tools.Call, which string) ([]tools.Subagent, error) {
	return l.d.subagents.CancelSubagents(ctx, call, which)
}
