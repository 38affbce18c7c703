package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

// skillFiles writes a skill folder (path → content) under dir.
func skillFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// resultsOfTool returns what the model was given as results of calls of
// tool, oldest first, across every request it got.
func resultsOfTool(llm *llmtest.Server, tool string) []string {
	names := map[string]string{}
	seen := map[string]bool{}
	var out []string
	for _, r := range llm.Requests() {
		for _, m := range r.Messages {
			for _, c := range m.ToolCalls {
				names[c.ID] = c.Name
			}
			if m.Role == "tool" && names[m.ToolCallID] == tool && !seen[m.ToolCallID] {
				seen[m.ToolCallID] = true
				out = append(out, m.Content)
			}
		}
	}
	return out
}

// callTool has user (in their own chat) make the model call tool with
// args and waits for the new reply carrying its result; it returns the
// result the model was given.
func callTool(ctx context.Context, t *testing.T, tg *telegramtest.Server, llm *llmtest.Server, user int64, tool string, args any) string {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	before := len(resultsOfTool(llm, tool))
	mark := lastID(tg, user)
	tg.SendText(user, user, "User", "please CALL_TOOL:"+tool+" "+string(raw))
	newReplyContaining(ctx, t, tg, user, mark, "tool "+tool+" said:")
	results := resultsOfTool(llm, tool)
	if len(results) <= before {
		t.Fatalf("the model got no new %s result", tool)
	}
	return results[len(results)-1]
}

// command sends text in user's chat and returns the new reply containing want.
func command(ctx context.Context, t *testing.T, tg *telegramtest.Server, user int64, text, want string) string {
	t.Helper()
	mark := lastID(tg, user)
	tg.SendText(user, user, "User", text)
	return newReplyContaining(ctx, t, tg, user, mark, want).Visible
}

// TestE2EDirectorySkillFoundUsedAndRead: a skill folder in skills.dirs is
// in the agent's prompt, found by skill_search, used with use_skill
// (instructions to the model, files to the workspace) and its file read
// with read_file from skills/NAME/; the agent cannot change it there.
// A folder added while running is picked up; an invalid one is skipped.
func TestE2EDirectorySkillFoundUsedAndRead(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	tg, llm := fakes(t)
	dir := t.TempDir()
	writeConfig(t, dir, "tools:\n  approvals: {mutating: allow}\n")
	skillFiles(t, filepath.Join(dir, "skills"), map[string]string{
		"release-notes/SKILL.md":           "---\nname: release-notes\ndescription: Writes release notes from merged pull requests\n---\n# Release notes\nRun scripts/collect.sh, then group the changes by area.\n",
		"release-notes/scripts/collect.sh": "git log --oneline v1..HEAD\n",
		"broken/SKILL.md":                  "no front matter here\n",
	})
	addr := freeAddr(t)
	d := startDaemon(t, dir, addr, externalEnv(t, tg, llm, addr))
	d.waitReady(ctx)
	const user = 701

	found := callTool(ctx, t, tg, llm, user, "skill_search", map[string]any{"query": "release notes for merged changes"})
	if !strings.Contains(found, "- release-notes (from skills.dirs): Writes release notes from merged pull requests") {
		t.Fatalf("skill_search gave the model %q", found)
	}
	if sys := systemOf(llm.Requests()[0]); !strings.Contains(sys, "## Skills") || !strings.Contains(sys, "- release-notes: Writes release notes") || strings.Contains(sys, "broken") {
		t.Fatalf("the system prompt's skills section is wrong:\n%s", sys)
	}
	used := callTool(ctx, t, tg, llm, user, "use_skill", map[string]any{"name": "release-notes"})
	for _, want := range []string{"skills/release-notes/scripts/collect.sh", "grants no permissions", "Run scripts/collect.sh, then group the changes by area."} {
		if !strings.Contains(used, want) {
			t.Fatalf("use_skill gave the model %q; want %q in it", used, want)
		}
	}
	read := callTool(ctx, t, tg, llm, user, "read_file", map[string]any{"path": "skills/release-notes/scripts/collect.sh"})
	if !strings.Contains(read, "git log --oneline v1..HEAD") {
		t.Fatalf("read_file gave the model %q", read)
	}
	wrote := callTool(ctx, t, tg, llm, user, "write_file", map[string]any{"path": "skills/release-notes/scripts/collect.sh", "content": "rm -rf ~"})
	if !strings.Contains(wrote, "read-only") {
		t.Fatalf("write_file under skills/ gave the model %q; want a refusal", wrote)
	}
	if missing := callTool(ctx, t, tg, llm, user, "use_skill", map[string]any{"name": "../etc"}); !strings.Contains(missing, "not a skill name") {
		t.Fatalf("use_skill of a hostile name gave %q", missing)
	}

	// A folder added while the daemon runs is found without a restart.
	skillFiles(t, filepath.Join(dir, "skills"), map[string]string{
		"triage/SKILL.md": "---\nname: triage\ndescription: Sorts incoming bug reports by severity\n---\nAsk for the logs.\n",
	})
	eventually(ctx, t, "the skill folders read again", func() bool {
		return strings.Contains(d.out.String(), `msg="skills read from skills.dirs" skills=2`)
	})
	if list := command(ctx, t, tg, user, "/skills", "Skills of agent"); !strings.Contains(list, "triage (dir ") {
		t.Fatalf("/skills after the folder was added = %q", list)
	}
	if found := callTool(ctx, t, tg, llm, user, "skill_search", map[string]any{"query": "bug severity"}); !strings.Contains(found, "triage") {
		t.Fatalf("skill_search for the added skill gave %q", found)
	}
	if !strings.Contains(d.out.String(), "skill folder skipped") {
		t.Error("the invalid skill folder was not reported in the log")
	}
}

// skillsE2E is a daemon with the skill dirs of its working directory,
// admin telegram:500 its approver, driven through the fake Telegram.
type skillsE2E struct {
	ctx     context.Context
	t       *testing.T
	tg      *telegramtest.Server
	llm     *llmtest.Server
	d       *daemonProc
	dir     string // the working directory: skills/ is its skills.dirs
	env     map[string]string
	answers int // button presses answered so far
}

// startSkillsE2E writes cfg and dirSkills (path under skills/ → content)
// into a new working directory and starts the daemon there.
func startSkillsE2E(t *testing.T, cfg string, dirSkills map[string]string) *skillsE2E {
	s := &skillsE2E{ctx: testCtx(t, 3*time.Minute), t: t, dir: t.TempDir()}
	s.tg, s.llm = fakes(t)
	writeConfig(t, s.dir, cfg)
	skillFiles(t, filepath.Join(s.dir, "skills"), dirSkills)
	addr := freeAddr(t)
	s.env = approvalEnv(t, s.tg, s.llm, addr)
	s.d = startDaemon(t, s.dir, addr, s.env)
	s.d.waitReady(s.ctx)
	return s
}

// press has presser press label on card and returns the answer.
func (s *skillsE2E) press(presser int64, card telegramtest.Message, label string) string {
	s.t.Helper()
	s.tg.PressButton(presser, presser, card.ID, buttonOn(s.t, card, label))
	s.answers++
	return lastAnswerText(s.ctx, s.t, s.tg, s.answers)
}

// write has the agent write a file in user's workspace.
func (s *skillsE2E) write(user int64, path, content string) {
	s.t.Helper()
	if got := callTool(s.ctx, s.t, s.tg, s.llm, user, "write_file", map[string]any{"path": path, "content": content}); !strings.Contains(got, "wrote") {
		s.t.Fatalf("write_file %s gave %q", path, got)
	}
}

// publish has user ask to publish folder path and returns the approval
// card the admin got and the newest message id of user's chat before.
func (s *skillsE2E) publish(user int64, path string) (card telegramtest.Message, mark int) {
	s.t.Helper()
	mark, adminMark := lastID(s.tg, user), lastID(s.tg, admin)
	s.tg.SendText(user, user, "Dev", `please CALL_TOOL:publish_skill {"path":"`+path+`"}`)
	return approvalCard(s.ctx, s.t, s.tg, admin, adminMark), mark
}

// TestE2EPublishedSkillThroughButtons: publish_skill shows the approver
// the skill (name, description, files, a script line the shell guard
// blocks) with Publish / Reject; what was shown is published even though
// the folder changed before the press; the skill is then found, used and
// read from another chat; a rejected one is not published.
func TestE2EPublishedSkillThroughButtons(t *testing.T) {
	s := startSkillsE2E(t, "tools:\n  approvals: {mutating: allow}\n", nil)
	ctx, tg, llm := s.ctx, s.tg, s.llm
	const dev, other = 700, 800
	s.write(dev, "pub/SKILL.md", "---\nname: weekly-report\ndescription: Builds the weekly status report from the task board\n---\nList done tasks, then open ones.\n")
	s.write(dev, "pub/scripts/cleanup.sh", "echo tidy\nrm -rf /\n")

	card, mark := s.publish(dev, "pub")
	for _, want := range []string{"wants to publish a skill", "skill: weekly-report", "Builds the weekly status report",
		"SKILL.md", "scripts/cleanup.sh", " B", "scripts/cleanup.sh line 2 is blocked by the shell guard", "scripts/cleanup.sh:2: rm -rf /"} {
		if !strings.Contains(card.Visible, want) {
			t.Fatalf("the approval card lacks %q:\n%s", want, card.Visible)
		}
	}
	var labels []string
	for _, b := range card.Buttons[0] {
		labels = append(labels, b.Text)
	}
	if strings.Join(labels, ",") != "Publish,Reject" {
		t.Fatalf("buttons = %v, want Publish, Reject", labels)
	}
	// The folder changes while the approver looks: what they saw is what
	// gets published.
	changed, _ := filepath.Glob(filepath.Join(s.env["SWITCHBOARD_DATA_DIR"], "workspaces", "*", "pub", "SKILL.md"))
	if len(changed) != 1 {
		t.Fatalf("found %v as the workspace's pub/SKILL.md", changed)
	}
	if err := os.WriteFile(changed[0], []byte("---\nname: weekly-report\ndescription: Sneaky\n---\nSomething else.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if a := s.press(admin, card, "Publish"); a != "Done: published." {
		t.Fatalf("Publish answered %q", a)
	}
	newReplyContaining(ctx, t, tg, dev, mark, "Published skill weekly-report as version 1")
	if e := waitEdited(ctx, t, tg, admin, card.ID); !strings.Contains(e.Visible, "Published by telegram:500") || len(e.Buttons) != 0 {
		t.Fatalf("the card after Publish = %q with buttons %v", e.Visible, e.Buttons)
	}

	found := callTool(ctx, t, tg, llm, other, "skill_search", map[string]any{"query": "weekly status report"})
	if !strings.Contains(found, "- weekly-report (published v1): Builds the weekly status report") {
		t.Fatalf("skill_search from another chat gave %q", found)
	}
	used := callTool(ctx, t, tg, llm, other, "use_skill", map[string]any{"name": "weekly-report"})
	if !strings.Contains(used, "List done tasks, then open ones.") || !strings.Contains(used, "skills/weekly-report/scripts/cleanup.sh") {
		t.Fatalf("use_skill from another chat gave %q", used)
	}
	if read := callTool(ctx, t, tg, llm, other, "read_file", map[string]any{"path": "skills/weekly-report/scripts/cleanup.sh"}); !strings.Contains(read, "echo tidy") {
		t.Fatalf("read_file of the published script gave %q", read)
	}

	// Reject: not published, the model is told, nobody finds it.
	s.write(dev, "rej/SKILL.md", "---\nname: risky-thing\ndescription: Does something the approvers dislike\n---\nNo.\n")
	card, mark = s.publish(dev, "rej")
	if a := s.press(admin, card, "Reject"); a != "Done: rejected." {
		t.Fatalf("Reject answered %q", a)
	}
	newReplyContaining(ctx, t, tg, dev, mark, "skill risky-thing was not published")
	if e := waitEdited(ctx, t, tg, admin, card.ID); !strings.Contains(e.Visible, "Rejected by telegram:500") {
		t.Fatalf("the card after Reject = %q", e.Visible)
	}
	if found := callTool(ctx, t, tg, llm, other, "skill_search", map[string]any{"query": "approvers dislike"}); strings.Contains(found, "risky-thing") {
		t.Fatalf("a rejected skill was found: %q", found)
	}
	if list := command(ctx, t, tg, other, "/skills", "Skills of agent"); strings.Contains(list, "risky-thing") {
		t.Fatalf("/skills lists the rejected skill: %q", list)
	}
}

// TestE2ESkillNamesAndDisable: a directory skill's name cannot be
// published; /skills lists each skill's source; only admins disable and
// enable, and a disabled skill is neither found nor usable; a directory
// skill added later shadows a published one of its name.
func TestE2ESkillNamesAndDisable(t *testing.T) {
	s := startSkillsE2E(t, "tools:\n  approvals: {mutating: allow}\n", map[string]string{
		"release-notes/SKILL.md": "---\nname: release-notes\ndescription: Writes release notes\n---\nBody.\n",
	})
	ctx, tg, llm := s.ctx, s.tg, s.llm
	const dev, other = 700, 800
	s.write(dev, "clash/SKILL.md", "---\nname: release-notes\ndescription: Mine\n---\nx\n")
	if got := callTool(ctx, t, tg, llm, dev, "publish_skill", map[string]any{"path": "clash"}); !strings.Contains(got, "a skill in skills.dirs is called release-notes; pick another name") {
		t.Fatalf("publishing a directory skill's name gave %q", got)
	}
	s.write(dev, "pub/SKILL.md", "---\nname: weekly-report\ndescription: Builds the weekly status report\n---\nFrom the database.\n")
	card, mark := s.publish(dev, "pub")
	if a := s.press(admin, card, "Publish"); a != "Done: published." {
		t.Fatalf("Publish answered %q", a)
	}
	newReplyContaining(ctx, t, tg, dev, mark, "Published skill weekly-report as version 1")

	if found := callTool(ctx, t, tg, llm, other, "skill_search", map[string]any{"query": "weekly status report"}); !strings.Contains(found, "weekly-report") {
		t.Fatalf("skill_search after publishing gave %q", found)
	}
	if sys := lastSystem(llm); !strings.Contains(sys, "- weekly-report: Builds the weekly status report") {
		t.Fatalf("the system prompt after publishing does not offer it:\n%s", sys)
	}
	list := command(ctx, t, tg, other, "/skills", "Skills of agent")
	if !strings.Contains(list, "weekly-report (published v1)") || !strings.Contains(list, "release-notes (dir ") {
		t.Fatalf("/skills = %q", list)
	}
	command(ctx, t, tg, other, "/skills disable weekly-report", "Only admins")
	command(ctx, t, tg, admin, "/skills disable weekly-reprt", "There is no skill called weekly-reprt")
	command(ctx, t, tg, admin, "/skills disable weekly-report", "is disabled for every agent")
	if list := command(ctx, t, tg, other, "/skills", "Skills of agent"); !strings.Contains(list, "weekly-report (published v1) — disabled") {
		t.Fatalf("/skills after disable = %q", list)
	}
	if got := callTool(ctx, t, tg, llm, other, "use_skill", map[string]any{"name": "weekly-report"}); !strings.Contains(got, "no skill called weekly-report is available") {
		t.Fatalf("use_skill of a disabled skill gave %q", got)
	}
	// The skill lists come from memory (SkillsCache): the system prompt the
	// model receives follows a disable and an enable at once.
	if sys := lastSystem(llm); strings.Contains(sys, "weekly-report") {
		t.Fatalf("the system prompt after /skills disable still offers it:\n%s", sys)
	}
	if got := callTool(ctx, t, tg, llm, other, "skill_search", map[string]any{"query": "weekly status report"}); strings.Contains(got, "weekly-report") {
		t.Fatalf("skill_search found a disabled skill: %q", got)
	}
	command(ctx, t, tg, admin, "/skills enable weekly-report", "enabled again")
	if found := callTool(ctx, t, tg, llm, other, "skill_search", map[string]any{"query": "weekly status report"}); !strings.Contains(found, "weekly-report") {
		t.Fatalf("skill_search after enable gave %q", found)
	}
	if sys := lastSystem(llm); !strings.Contains(sys, "- weekly-report: Builds the weekly status report") {
		t.Fatalf("the system prompt after /skills enable does not offer it:\n%s", sys)
	}

	// A directory skill added later with the published name shadows it.
	skillFiles(t, filepath.Join(s.dir, "skills"), map[string]string{
		"weekly-report/SKILL.md": "---\nname: weekly-report\ndescription: The team's own weekly report\n---\nFrom the folder.\n",
	})
	eventually(ctx, t, "the skill folders read again", func() bool {
		return strings.Contains(s.d.out.String(), `msg="skills read from skills.dirs" skills=2`)
	})
	if list := command(ctx, t, tg, other, "/skills", "Skills of agent"); !strings.Contains(list, "— shadows published v1: The team's own weekly report") {
		t.Fatalf("/skills with a shadowing folder = %q", list)
	}
	if used := callTool(ctx, t, tg, llm, other, "use_skill", map[string]any{"name": "weekly-report"}); !strings.Contains(used, "From the folder.") {
		t.Fatalf("use_skill of the shadowed name gave %q; want the folder's", used)
	}
}

// TestE2EDoctorListsSkippedSkills: doctor reads skills.dirs as serve
// would and warns about each folder it would skip, saying why.
func TestE2EDoctorListsSkippedSkills(t *testing.T) {
	_, llm := fakes(t)
	env := externalEnv(t, nil, llm, "")
	dir := t.TempDir()
	skillFiles(t, filepath.Join(dir, "skills"), map[string]string{
		"good/SKILL.md":   "---\nname: good\ndescription: Works\n---\n",
		"broken/SKILL.md": "---\nname: Not_A_Name\ndescription: x\n---\n",
	})
	out, line := doctorLine(t, dir, env, "WARN skills:")
	if !strings.Contains(line, "1 skill(s) in skills.dirs; skipped: skills/broken: \"Not_A_Name\" is not a skill name") {
		t.Fatalf("doctor's skills line = %q; output:\n%s", line, out)
	}
}

// TestE2EPublishSkillFollowsQuorumRules: approvals.rules match
// publish_skill by its group; the requester's own Publish press counts
// nothing, and the skill is published only when another approver presses.
func TestE2EPublishSkillFollowsQuorumRules(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	tg, llm := fakes(t)
	dir := t.TempDir()
	writeConfig(t, dir, `tools:
  approvals: {mutating: allow}
approvals:
  rules:
    - tools: ["group:knowledge"]
      approvers: ["telegram:700", "telegram:1001"]
`)
	addr := freeAddr(t)
	d := startDaemon(t, dir, addr, approvalEnv(t, tg, llm, addr))
	d.waitReady(ctx)
	const dev, alice = 700, 1001
	if got := callTool(ctx, t, tg, llm, dev, "write_file", map[string]any{"path": "s/SKILL.md",
		"content": "---\nname: on-call\ndescription: Hands over the on-call shift\n---\nWrite the handover note.\n"}); !strings.Contains(got, "wrote") {
		t.Fatalf("write_file gave %q", got)
	}
	mark := lastID(tg, dev)
	tg.SendText(dev, dev, "Dev", `please CALL_TOOL:publish_skill {"path":"s"}`)
	mine, theirs := approvalCard(ctx, t, tg, dev, mark), approvalCard(ctx, t, tg, alice, 0)
	tg.PressButton(dev, dev, mine.ID, buttonOn(t, mine, "Publish"))
	if a := lastAnswerText(ctx, t, tg, 1); a != "You asked for this; another approver must decide." {
		t.Fatalf("the requester's own press answered %q", a)
	}
	tg.PressButton(alice, alice, theirs.ID, buttonOn(t, theirs, "Publish"))
	if a := lastAnswerText(ctx, t, tg, 2); a != "Done: published." {
		t.Fatalf("the other approver's press answered %q", a)
	}
	newReplyContaining(ctx, t, tg, dev, mark, "Published skill on-call as version 1")
}

// An agent whose policy offers no use_skill is not told of skills in its
// system prompt: it could not read them.
func TestE2ESkillsLeftOutOfPromptWithoutUseSkill(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	tg, llm := fakes(t)
	dir := t.TempDir()
	writeConfig(t, dir, "tools:\n  deny: [\"group:knowledge\"]\n")
	skillFiles(t, filepath.Join(dir, "skills"), map[string]string{
		"release-notes/SKILL.md": "---\nname: release-notes\ndescription: Writes release notes\n---\nBody.\n",
	})
	addr := freeAddr(t)
	d := startDaemon(t, dir, addr, externalEnv(t, tg, llm, addr))
	d.waitReady(ctx)
	callTool(ctx, t, tg, llm, 702, "datetime", map[string]any{})
	if sys := systemOf(llm.Requests()[0]); strings.Contains(sys, "## Skills") || strings.Contains(sys, "release-notes") {
		t.Fatalf("the system prompt tells of skills the agent cannot use:\n%s", sys)
	}
}

// lastSystem is the system prompt of the newest request the model got.
func lastSystem(llm *llmtest.Server) string {
	reqs := llm.Requests()
	if len(reqs) == 0 {
		return ""
	}
	return systemOf(reqs[len(reqs)-1])
}
