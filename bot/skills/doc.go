// Package skills gives agents skills: folders of instructions (a SKILL.md
// with a name and a description in its front matter) and files, read from
// skills.dirs or published into PostgreSQL through publish_skill after the
// approvers said Publish. It owns the skill types and SKILL.md checks, the
// directory source, the catalog that merges the sources under each agent's
// allow list (its prompt section, search and use), the tools skill_search,
// use_skill and publish_skill, and /skills. A skill grants nothing: its
// scripts run through exec with the same approvals as any command.
package skills
