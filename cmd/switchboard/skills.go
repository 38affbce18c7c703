package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/switchboard-chat/switchboard/bot/skills"
	"github.com/switchboard-chat/switchboard/config"
	"github.com/switchboard-chat/switchboard/tools"
	toolexec "github.com/switchboard-chat/switchboard/tools/exec"
)

// skillTools builds the skills catalog (skills.dirs read now, published
// skills from PostgreSQL; skills.allow and agents[].skills decide who
// sees which) and returns skill_search, use_skill and publish_skill.
func (d *daemon) skillTools(workspaces toolexec.Workspaces, approver tools.Approver) []tools.Tool {
	perAgent := map[string][]string{}
	for _, a := range d.cfg.Agents {
		if len(a.Skills) > 0 {
			perAgent[a.Name] = a.Skills
		}
	}
	d.skills = skills.NewCatalog(skills.CatalogOptions{
		Dirs: skills.NewDirs(d.cfg.Skills.Dirs, d.log), Store: d.st.skills,
		Allow: d.cfg.Skills.Allow, AgentAllow: perAgent, Logger: d.log,
	})
	return skills.NewTools(skills.ToolOptions{Catalog: d.skills, Store: d.st.skills, Workspace: workspaces.For, Approver: approver, Logger: d.log})
}

// skillsPrompt is the skills section of agent's system prompt; when the
// published skills cannot be read it is left out (logged), and the rest
// of the prompt stands.
func (d *daemon) skillsPrompt(ctx context.Context, agent string) string {
	text, err := d.skills.Prompt(ctx, agent)
	if err != nil {
		d.log.Warn("skills left out of the prompt", "agent", agent, "err", err)
		return ""
	}
	return text
}

// checkSkills reads skills.dirs as serve would and warns about each
// folder it would skip.
func checkSkills(cfg *config.Config) (string, error) {
	d := skills.NewDirs(cfg.Skills.Dirs, nil)
	if p := d.Problems(); len(p) > 0 {
		return "", doctorWarning(fmt.Sprintf("%d skill(s) in skills.dirs; skipped: %s", len(d.All()), strings.Join(p, "; ")))
	}
	return fmt.Sprintf("%d skill(s) in skills.dirs %v", len(d.All()), cfg.Skills.Dirs), nil
}
