package postgres_test

import (
	"context"
	"sync"
	"testing"

	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

func TestMigrateConcurrentReplicas(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	const replicas = 4
	dbs := make([]*postgres.DB, replicas)
	for i := range dbs {
		db, err := postgres.Open(ctx, url, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		dbs[i] = db
	}
	errs := make([]error, replicas)
	var wg sync.WaitGroup
	for i, db := range dbs {
		wg.Go(func() { errs[i] = postgres.Migrate(ctx, db) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("replica %d: Migrate: %v", i, err)
		}
	}

	var applied int
	if err := dbs[0].Pool().QueryRow(ctx,
		`SELECT count(*) FROM goose_db_version WHERE version_id = 1 AND is_applied`).Scan(&applied); err != nil {
		t.Fatal(err)
	}
	if applied != 1 {
		t.Errorf("migration 1 recorded %d times, want once", applied)
	}
	for _, table := range []string{"identities", "sessions", "messages", "outbox"} {
		var exists bool
		if err := dbs[0].Pool().QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, table).Scan(&exists); err != nil {
			t.Fatal(err)
		}
		if !exists {
			t.Errorf("table %s missing after Migrate", table)
		}
	}
	for _, index := range []string{"messages_session_external_id_key", "outbox_session_source_seq_key", "outbox_claim_idx"} {
		var exists bool
		if err := dbs[0].Pool().QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, index).Scan(&exists); err != nil {
			t.Fatal(err)
		}
		if !exists {
			t.Errorf("index %s missing after Migrate", index)
		}
	}

	// Migrating an up-to-date database changes nothing.
	if err := postgres.Migrate(ctx, dbs[1]); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
}

// TestMigrateFastPath: an up-to-date schema is recognised with one query;
// a new database, or one missing a migration, is not (goose then runs).
func TestMigrateFastPath(t *testing.T) {
	ctx := context.Background()
	fresh, err := postgres.Open(ctx, pgtest.New(t), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if ok, _ := fresh.SchemaUpToDate(ctx); ok {
		t.Fatal("a new database counts as up to date")
	}
	if err := postgres.Migrate(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	if ok, err := fresh.SchemaUpToDate(ctx); err != nil || !ok {
		t.Fatalf("after Migrate: %v, %v", ok, err)
	}
	// Without the newest migration's record (a database an older version
	// migrated), the fast path must step aside for goose.
	if _, err := fresh.Pool().Exec(ctx, `DELETE FROM goose_db_version WHERE version_id = (SELECT max(version_id) FROM goose_db_version)`); err != nil {
		t.Fatal(err)
	}
	if ok, _ := fresh.SchemaUpToDate(ctx); ok {
		t.Fatal("a schema missing its newest migration counts as up to date")
	}
}
