package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

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
	var repeated int
	if err := dbs[0].Pool().QueryRow(ctx,
		`SELECT count(*) - count(DISTINCT version_id) FROM goose_db_version`).Scan(&repeated); err != nil {
		t.Fatal(err)
	}
	if repeated != 0 {
		t.Errorf("%d migrations recorded more than once by replicas migrating at the same time", repeated)
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

// schemaOf describes the public schema and the applied versions as text.
func schemaOf(t *testing.T, ctx context.Context, db *postgres.DB) string {
	t.Helper()
	var s string
	err := db.Pool().QueryRow(ctx, `SELECT string_agg(x, E'\n' ORDER BY x) FROM (
		SELECT format('column %s.%s %s null=%s default=%s', table_name, column_name, data_type, is_nullable, column_default)
			FROM information_schema.columns WHERE table_schema = 'public'
		UNION ALL SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = 'public'
		UNION ALL SELECT format('constraint %s %s', conname, pg_get_constraintdef(oid))
			FROM pg_constraint WHERE connamespace = 'public'::regnamespace
		UNION ALL SELECT 'trigger ' || pg_get_triggerdef(oid) FROM pg_trigger WHERE NOT tgisinternal
		UNION ALL SELECT 'function ' || pg_get_functiondef(oid) FROM pg_proc WHERE pronamespace = 'public'::regnamespace
		UNION ALL SELECT format('version %s %s', version_id, is_applied) FROM goose_db_version
		) t(x)`).Scan(&s)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// openEmpty opens a new database without migrating it.
func openEmpty(t *testing.T, ctx context.Context) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(ctx, pgtest.New(t), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

// TestMigrateWithAPoolOfOne: goose keeps its lock's connection for the
// whole run and runs NO TRANSACTION migrations on another one, so Migrate
// must not take them from a pool that may hold a single connection.
func TestMigrateWithAPoolOfOne(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	db, err := postgres.Open(ctx, pgtest.New(t), postgres.Options{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	if err := postgres.Migrate(ctx, db); err != nil {
		t.Fatalf("Migrate with a one-connection pool: %v", err)
	}
	if ok, err := db.SchemaUpToDate(ctx); err != nil || !ok {
		t.Fatalf("SchemaUpToDate = %v, %v after Migrate", ok, err)
	}
}

// TestStartupReadsKeepNoStatement checks that what a start reads once (the
// schema version, stored custom tools and MCP servers) is not left behind
// as a prepared statement for the life of the connection.
func TestStartupReadsKeepNoStatement(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	db := pgtest.OpenWith(t, ctx, postgres.Options{MaxConns: 1})
	if ok, err := db.SchemaUpToDate(ctx); err != nil || !ok {
		t.Fatalf("SchemaUpToDate = %v, %v", ok, err)
	}
	if _, err := (postgres.CustomTools{DB: db}).List(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := (postgres.MCPServers{DB: db}).List(ctx); err != nil {
		t.Fatal(err)
	}
	// One connection, so this session is the one that ran them; asked
	// without preparing, so this query is not among them.
	var kept []string
	rows, err := db.Pool().Query(ctx, `SELECT statement FROM pg_prepared_statements
		WHERE statement ~ '(goose_db_version|custom_tools|mcp_servers)'`, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	if kept, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		t.Fatal(err)
	}
	if len(kept) > 0 {
		t.Fatalf("prepared statements kept after the start's reads: %q", kept)
	}
}
