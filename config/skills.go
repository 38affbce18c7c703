package config

import (
	"regexp"
	"strings"
)

// Skills configures where skills come from and which agents see them.
type Skills struct {
	// Dirs are folders whose sub-folders, each with a SKILL.md, are
	// skills; read at start and again when they change. A folder that
	// does not exist holds no skills.
	Dirs []string `mapstructure:"dirs"`
	// Allow names the skills every agent may see and use, unless the
	// agent's own agents[].skills says otherwise; empty allows all.
	Allow []string `mapstructure:"allow"`
}

// Knowledge configures the knowledge graph built from memory documents.
type Knowledge struct {
	// Extract turns on extracting entities and relations from memory
	// documents as they are written.
	Extract bool `mapstructure:"extract"`
	// Model is the extraction model on the agent's provider; empty is the
	// agent's own model.
	Model string `mapstructure:"model"`
}

// skillName is the Agent Skills naming rule: lower-case letters, digits
// and single hyphens, not at either end, at most 64 characters.
var skillName = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// IsSkillName reports whether name is a valid skill name.
func IsSkillName(name string) bool { return len(name) <= 64 && skillName.MatchString(name) }

// validateSkills checks the skill folders and allow lists.
func (c *Config) validateSkills(add func(string, ...any)) {
	for i, d := range c.Skills.Dirs {
		if strings.TrimSpace(d) == "" {
			add("skills.dirs[%d] is empty; remove it or name a folder (e.g. ./skills)", i)
		}
	}
	checkSkillNames(add, "skills.allow", c.Skills.Allow)
	for _, a := range c.Agents {
		checkSkillNames(add, "agents["+a.Name+"].skills", a.Skills)
	}
}

// checkSkillNames adds a problem for each entry of list that is not a
// skill name.
func checkSkillNames(add func(string, ...any), key string, list []string) {
	for _, n := range list {
		if !IsSkillName(n) {
			add("%s: %q is not a skill name (lower-case letters, digits and hyphens, e.g. release-notes)", key, n)
		}
	}
}
