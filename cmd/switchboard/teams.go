package main

import (
	"fmt"

	"github.com/switchboard-chat/switchboard/bot/teams"
)

// wireTeams builds the team runtime, which owns the teammates' sessions
// the router runs, and registers the teams feature's chat command (/tasks)
// with the router.
func (d *daemon) wireTeams() error {
	d.teams = teams.New(d.router, teams.Options{
		Mail: d.st.rdb, Outcomes: d.st.db, Board: d.st.db, TeamOf: teamOf(d.cfg), Members: teamMembers(d.cfg),
		Logger: d.log,
	})
	d.router.RunInBackground(d.teams)
	if err := d.router.Register(teams.Commands(d.teams)...); err != nil {
		return fmt.Errorf("teams: %w", err)
	}
	return nil
}
