package postgres_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// TestMigrateUpgradesWhatThePreviousReaderMigrated: a database that the
// previous migration reader brought to migration 20 (testdata, a dump of
// one) is taken as it is: no migration runs again, its data stays, and its
// schema is the one a new database gets.
func TestMigrateUpgradesWhatThePreviousReaderMigrated(t *testing.T) {
	ctx := context.Background()
	dump, err := os.ReadFile("testdata/migrated_by_the_previous_reader.sql")
	if err != nil {
		t.Fatal(err)
	}
	url := pgtest.New(t)
	// A connection of its own: the dump empties its search_path.
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(ctx, string(dump), pgx.QueryExecModeSimpleProtocol)
	conn.Close(ctx)
	if err != nil {
		t.Fatalf("restoring the previous reader's database: %v", err)
	}
	old, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(old.Close)
	records := func() (n, last, version int64) {
		t.Helper()
		if err := old.Pool().QueryRow(ctx, `SELECT count(*), max(id), max(version_id) FROM goose_db_version`).Scan(&n, &last, &version); err != nil {
			t.Fatal(err)
		}
		return n, last, version
	}
	n, last, version := records()
	sources, err := postgres.MigrationSources(old)
	if err != nil {
		t.Fatal(err)
	}
	// Each migration newer than the dump adds one record; none of the
	// dump's own may run again.
	newer := int64(len(sources)) - version
	if err := postgres.Migrate(ctx, old); err != nil {
		t.Fatalf("Migrate of the previous reader's database: %v", err)
	}
	// Past the fast path too: goose itself finds nothing to apply.
	if applied, err := postgres.GooseUp(ctx, old); err != nil || applied != 0 {
		t.Fatalf("goose's own Up after Migrate applied %d migrations, %v; want none", applied, err)
	}
	if n2, last2, _ := records(); n2 != n+newer || last2 != last+newer {
		t.Errorf("version records %d (last id %d) after Migrate, %d (%d) before with %d newer migrations: migrations ran again", n2, last2, n, last, newer)
	}
	msgs, err := old.Load(ctx, "a/telegram:1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || msgs[0].Content != "kept through the upgrade" {
		t.Errorf("the stored session after the upgrade = %+v", msgs)
	}

	fresh := openEmpty(t, ctx)
	if err := postgres.Migrate(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	// Migrations newer than the dump are applied to it as to a new
	// database; up to the dump's, the two schemas are the same.
	if a, b := schemaOf(t, ctx, old), schemaOf(t, ctx, fresh); a != b {
		t.Fatalf("schemas differ\n--- upgraded:\n%s\n--- new:\n%s", a, b)
	}
}

// TestGooseReadsEveryMigration: goose's own parser reads every embedded
// file, numbered from 1 without a gap.
func TestGooseReadsEveryMigration(t *testing.T) {
	sources, err := postgres.MigrationSources(openEmpty(t, context.Background()))
	if err != nil {
		t.Fatal(err)
	}
	if len(sources) < 20 {
		t.Fatalf("goose found %d migrations, want at least 20", len(sources))
	}
	for i, s := range sources {
		if s.Version != int64(i+1) {
			t.Errorf("%s: version %d, want %d", s.Path, s.Version, i+1)
		}
	}
}
