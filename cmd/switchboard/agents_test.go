package main

import (
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/config"
)

func TestTeamPromptOnlyForTheLead(t *testing.T) {
	cfg := config.Defaults()
	cfg.Agents = []config.NamedAgent{{Name: "ops", Description: "on-call helper"}, {Name: "writer"}}
	cfg.Teams = []config.Team{{Name: "incident", Lead: "ops", Members: []string{"writer", "default"}}}
	cfg.Agent.Description = "answers everyone"
	lead := teamPrompt(&cfg, "ops")
	for _, want := range []string{"## TEAM.md", "You lead team incident", "- writer: no description", "- default: answers everyone", "team_tasks"} {
		if !strings.Contains(lead, want) {
			t.Errorf("lead's TEAM.md lacks %q:\n%s", want, lead)
		}
	}
	if got := teamPrompt(&cfg, "writer"); got != "" {
		t.Errorf("a member got a TEAM.md: %q", got)
	}
	team, lead2, ok := teamOf(&cfg)("writer")
	if !ok || team != "incident" || lead2 != "ops" {
		t.Errorf("teamOf(writer) = %q %q %v", team, lead2, ok)
	}
	if got := teamMembers(&cfg)("incident"); strings.Join(got, ",") != "ops,writer,default" {
		t.Errorf("members = %v", got)
	}
}
