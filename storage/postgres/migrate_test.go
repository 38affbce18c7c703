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
	for _, index := range []string{"messages_session_external_id_key", "outbox_session_source_seq_key", "outbox_status_next_attempt_idx"} {
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
