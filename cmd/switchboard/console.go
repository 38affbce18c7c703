package main

import (
	"fmt"

	"github.com/switchboard-chat/switchboard/bot/console"
	"github.com/switchboard-chat/switchboard/tools/mcp"
)

// wireConsole makes the admin console, served at /admin on every replica's
// HTTP server (its state is in PostgreSQL), and registers /login and
// /logout.
func (d *daemon) wireConsole() error {
	d.console = console.New(console.Options{
		Store: d.st.db, PublicURL: d.cfg.HTTP.PublicURL, AdminToken: d.cfg.HTTP.AdminToken,
		IsAdmin: d.router.IsAdmin, Approvals: d.approvals, Logger: d.log,
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
