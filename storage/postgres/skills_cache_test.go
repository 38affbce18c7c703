package postgres_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/storage/postgres"
)

// The skill lists of every run's prompt come from memory while the cache
// listens; a publish or a /skills disable on any replica is seen at once
// here, and a change that sends no notice shows the reads were kept.
func TestSkillsCacheKeepsListsUntilASkillChanges(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dbs := openReplicas(t, ctx, 2)
	if err := postgres.Migrate(ctx, dbs[0]); err != nil {
		t.Fatal(err)
	}
	here, other := postgres.NewSkillsCache(dbs[0]), dbs[1] // other: another replica
	names := func() (published, disabled []string) {
		t.Helper()
		list, err := here.PublishedSkills(ctx, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range list {
			published = append(published, p.Name+":"+p.Description)
		}
		if disabled, err = here.DisabledSkills(ctx); err != nil {
			t.Fatal(err)
		}
		return published, disabled
	}
	// quietly renames the published skill without the notice the trigger
	// sends, so a read shows whether it came from memory.
	quietly := func(desc string) {
		t.Helper()
		for _, stmt := range []string{`ALTER TABLE skills DISABLE TRIGGER skills_notify`,
			`UPDATE skills SET description = '` + desc + `' WHERE status = 'published'`,
			`ALTER TABLE skills ENABLE TRIGGER skills_notify`} {
			if _, err := other.Pool().Exec(ctx, stmt); err != nil {
				t.Fatal(err)
			}
		}
	}
	snap, _, err := other.SnapshotSkill(ctx, skillSnapshot("deploy", "v1", "call-1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.PublishSkill(ctx, snap.ID, "u1"); err != nil {
		t.Fatal(err)
	}

	startListening(t, ctx, here.Listen)
	waitFor(t, "the cache to listen", here.Listening)

	if got, _ := names(); !slices.Equal(got, []string{"deploy:v1"}) {
		t.Fatalf("published %q, want deploy:v1", got)
	}
	quietly("v2") // no notice: the cache keeps v1
	if got, _ := names(); !slices.Equal(got, []string{"deploy:v1"}) {
		t.Fatalf("published %q, want deploy:v1 kept in memory (the change sent no notice)", got)
	}
	// Another replica disables it: its notice arrives, and the quiet
	// change is read too.
	if _, err := other.SetSkillDisabled(ctx, "deploy", true, "u1"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "another replica's /skills disable", func() bool {
		published, disabled := names()
		return slices.Equal(disabled, []string{"deploy"}) && slices.Equal(published, []string{"deploy:v2"})
	})
	// A change made through the cache is read back at once.
	if _, err := here.SetSkillDisabled(ctx, "deploy", false, "u1"); err != nil {
		t.Fatal(err)
	}
	if _, disabled := names(); len(disabled) != 0 {
		t.Fatalf("disabled %q right after enabling through the cache, want none", disabled)
	}
}
