package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/switchboard-chat/switchboard/bot/skills"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// skillSnapshot is a pending snapshot of skill name by call id.
func skillSnapshot(name, desc, call string) skills.Snapshot {
	manifest := "---\nname: " + name + "\ndescription: " + desc + "\n---\nDo it."
	return skills.Snapshot{
		Skill: skills.Skill{Name: name, Description: desc, Body: "Do it.", Files: []skills.File{
			{Path: "SKILL.md", Data: []byte(manifest)}, {Path: "scripts/run.sh", Data: []byte("echo hi\n")},
		}},
		Session: "ops/telegram:1", ToolCallID: call, Agent: "ops", Requester: "telegram:7",
	}
}

// TestSkillSnapshotIsIdempotentByCall: one snapshot per tool call; the
// call made again gets the first one back, files included, whatever it
// passes now; pending snapshots are not published skills.
func TestSkillSnapshotIsIdempotentByCall(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	first, created, err := db.SnapshotSkill(ctx, skillSnapshot("deploy", "Deploys the app", "call-1"))
	if err != nil || !created || first.ID == 0 || first.Status != skills.StatusPending {
		t.Fatalf("first snapshot = %+v, %v, %v", first, created, err)
	}
	// The call made again after the approval, with the folder changed
	// meanwhile: the snapshot the approvers saw is what comes back.
	changed := skillSnapshot("deploy", "Something else entirely", "call-1")
	changed.Skill.Files = changed.Skill.Files[:1]
	again, created, err := db.SnapshotSkill(ctx, changed)
	if err != nil || created || again.ID != first.ID || again.Skill.Description != "Deploys the app" || len(again.Skill.Files) != 2 {
		t.Fatalf("repeated snapshot = %+v, created %v, %v; want the first one with its two files", again, created, err)
	}
	found, ok, err := db.FindSnapshot(ctx, "ops/telegram:1", "call-1")
	if err != nil || !ok || found.ID != first.ID || string(found.Skill.Files[1].Data) != "echo hi\n" {
		t.Fatalf("FindSnapshot = %+v, %v, %v", found, ok, err)
	}
	if _, ok, err := db.FindSnapshot(ctx, "ops/telegram:1", "call-2"); err != nil || ok {
		t.Fatalf("FindSnapshot of another call = %v, %v; want none", ok, err)
	}
	// Pending snapshots are not published skills.
	if list, err := db.PublishedSkills(ctx, true); err != nil || len(list) != 0 {
		t.Fatalf("PublishedSkills before any Publish = %+v, %v", list, err)
	}
}

// TestSkillVersionsNewestPublishedWins: each Publish is the next version;
// the newest published one is what agents see, rejected and pending ones
// change nothing; publishing and rejecting are audited.
func TestSkillVersionsNewestPublishedWins(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	publish := func(desc, call string) skills.Snapshot {
		t.Helper()
		s, _, err := db.SnapshotSkill(ctx, skillSnapshot("deploy", desc, call))
		if err != nil {
			t.Fatal(err)
		}
		p, err := db.PublishSkill(ctx, s.ID, "telegram:7")
		if err != nil || p.Status != skills.StatusPublished {
			t.Fatalf("PublishSkill = %+v, %v", p, err)
		}
		return p
	}
	v1 := publish("First take", "c1")
	v2 := publish("Second take", "c2")
	if v1.Version != 1 || v2.Version != 2 {
		t.Fatalf("versions = %d, %d; want 1, 2", v1.Version, v2.Version)
	}
	// A rejected and a pending later snapshot change nothing.
	rej, _, _ := db.SnapshotSkill(ctx, skillSnapshot("deploy", "Rejected take", "c3"))
	if r, err := db.RejectSkill(ctx, rej.ID, "telegram:7", "the approvers rejected this skill"); err != nil || r.Status != skills.StatusRejected {
		t.Fatalf("RejectSkill = %+v, %v", r, err)
	}
	if _, err := db.PublishSkill(ctx, rej.ID, "telegram:7"); err == nil {
		t.Fatal("a rejected snapshot was published")
	}
	_, _, _ = db.SnapshotSkill(ctx, skillSnapshot("deploy", "Pending take", "c4"))
	// Publishing again is harmless: the same version comes back.
	if again, err := db.PublishSkill(ctx, v2.ID, "telegram:7"); err != nil || again.Version != 2 {
		t.Fatalf("publishing v2 again = %+v, %v", again, err)
	}
	list, err := db.PublishedSkills(ctx, true)
	if err != nil || len(list) != 1 || list[0].Version != 2 || list[0].Description != "Second take" || list[0].ID != v2.ID || list[0].Body != "Do it." {
		t.Fatalf("PublishedSkills = %+v, %v; want deploy v2 only", list, err)
	}
	files, err := db.SkillFiles(ctx, v2.ID)
	if err != nil || len(files) != 2 || files[0].Path != "SKILL.md" {
		t.Fatalf("SkillFiles = %+v, %v", files, err)
	}
	entries, err := db.Audit(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range entries {
		if e.SubjectKind == postgres.SubjectSkill {
			actions = append(actions, e.Action)
		}
	}
	if want := []string{postgres.ActionSkillRejected, postgres.ActionSkillPublished, postgres.ActionSkillPublished}; !slices.Equal(actions, want) {
		t.Fatalf("skill audit (newest first) = %v, want %v", actions, want)
	}
}

// TestSkillConcurrentPublicationsGetDistinctVersions: concurrent
// publications of one name get versions 1..n, none twice.
func TestSkillConcurrentPublicationsGetDistinctVersions(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	var ids []int64
	for i := range 4 {
		s, _, err := db.SnapshotSkill(ctx, skillSnapshot("deploy", "Take", fmt.Sprintf("c%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		versions []int
	)
	for _, id := range ids {
		wg.Go(func() {
			p, err := db.PublishSkill(ctx, id, "telegram:7")
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			versions = append(versions, p.Version)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(versions)
	if !slices.Equal(versions, []int{1, 2, 3, 4}) {
		t.Fatalf("versions = %v, want 1..4", versions)
	}
}

// TestSkillRankingByFullText: name and description outrank the body,
// stemming and any-word matches find skills, and hostile or stop-word
// queries find nothing without an error.
func TestSkillRankingByFullText(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	docs := []skills.Doc{
		{Name: "release-notes", Description: "Writes release notes from merged pull requests", Body: "Collect the changes."},
		{Name: "deploy-app", Description: "Deploys the application to production", Body: "Run the deploy script, then check the release."},
		{Name: "pdf-forms", Description: "Fills in PDF forms", Body: "Use the form fields."},
	}
	got, err := db.RankSkills(ctx, "release", docs, 5)
	if err != nil {
		t.Fatal(err)
	}
	// The name and description match outranks a match in the body.
	if !slices.Equal(got, []string{"release-notes", "deploy-app"}) {
		t.Fatalf("ranking for release = %v", got)
	}
	if got, _ := db.RankSkills(ctx, "deploying to production", docs, 5); len(got) == 0 || got[0] != "deploy-app" {
		t.Fatalf("ranking for deploying to production = %v (stemming, any word)", got)
	}
	if got, _ := db.RankSkills(ctx, "release", docs, 1); !slices.Equal(got, []string{"release-notes"}) {
		t.Fatalf("limit 1 = %v", got)
	}
	for _, q := range []string{"the", "kubernetes", "'); DROP TABLE skills; --", "a & | ! <->"} {
		if got, err := db.RankSkills(ctx, q, docs, 5); err != nil || len(got) != 0 {
			t.Fatalf("ranking for %q = %v, %v; want nothing and no error", q, got, err)
		}
	}
}

// TestSkillDisableAndEnable: disabling and enabling report whether they
// changed anything and are audited with the admin as the actor.
func TestSkillDisableAndEnable(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	if changed, err := db.SetSkillDisabled(ctx, "deploy", false, "telegram:500"); err != nil || changed {
		t.Fatalf("enabling a skill never disabled = %v, %v; want no change", changed, err)
	}
	if changed, err := db.SetSkillDisabled(ctx, "deploy", true, "telegram:500"); err != nil || !changed {
		t.Fatalf("disable = %v, %v", changed, err)
	}
	if changed, err := db.SetSkillDisabled(ctx, "deploy", true, "telegram:500"); err != nil || changed {
		t.Fatalf("disable again = %v, %v; want no change", changed, err)
	}
	if list, err := db.DisabledSkills(ctx); err != nil || !slices.Equal(list, []string{"deploy"}) {
		t.Fatalf("DisabledSkills = %v, %v", list, err)
	}
	if changed, err := db.SetSkillDisabled(ctx, "deploy", false, "telegram:500"); err != nil || !changed {
		t.Fatalf("enable = %v, %v", changed, err)
	}
	if list, err := db.DisabledSkills(ctx); err != nil || len(list) != 0 {
		t.Fatalf("DisabledSkills after enable = %v, %v", list, err)
	}
	entries, _ := db.Audit(ctx, 5)
	if len(entries) != 2 || entries[0].Action != postgres.ActionSkillEnabled || entries[1].Action != postgres.ActionSkillDisabled ||
		entries[0].Actor != "telegram:500" || entries[0].SubjectID != "deploy" {
		t.Fatalf("audit = %+v; want disabled then enabled, by the admin", entries)
	}
}

// TestApprovalVerbIsStored: an approval keeps its verb (publish), so
// every replica renders its Publish / Reject buttons.
func TestApprovalVerbIsStored(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	a := newApproval("ap-verb", "ops/telegram:1", "call-verb")
	a.Tool, a.Verb = "publish_skill", "publish"
	stored, created, err := db.CreateApproval(ctx, a)
	if err != nil || !created || stored.Verb != "publish" {
		t.Fatalf("CreateApproval = verb %q, %v, %v", stored.Verb, created, err)
	}
	if got, err := db.GetApproval(ctx, "ap-verb"); err != nil || got.Verb != "publish" {
		t.Fatalf("GetApproval = verb %q, %v", got.Verb, err)
	}
}
