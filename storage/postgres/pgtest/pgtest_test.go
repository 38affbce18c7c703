package pgtest_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

func databaseExists(t *testing.T, name string) bool {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.ServerURL())
	if err != nil {
		t.Skipf("test server unreachable: %v", err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	return exists
}

func TestNewCreatesAndDrops(t *testing.T) {
	var name string
	outer := t
	t.Run("use", func(t *testing.T) {
		raw := pgtest.New(t)
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		name = strings.TrimPrefix(u.Path, "/")
		if !strings.HasPrefix(name, "sbtest_") {
			t.Errorf("database %q lacks the sbtest_ prefix", name)
		}
		if !databaseExists(t, name) {
			t.Fatalf("database %s does not exist", name)
		}
		// A connection still open when the test ends must not block the drop.
		conn, err := pgx.Connect(context.Background(), raw)
		if err != nil {
			t.Fatal(err)
		}
		outer.Cleanup(func() { _ = conn.Close(context.Background()) })
	})
	if name == "" {
		t.Skip("subtest skipped")
	}
	if databaseExists(t, name) {
		t.Errorf("database %s still exists after its test ended", name)
	}
}

func TestOpenMigrates(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	var exists bool
	if err := db.Pool().QueryRow(ctx, `SELECT to_regclass('outbox') IS NOT NULL`).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if !exists {
		t.Error("Open returned an unmigrated database")
	}
}

func TestNewSkipsWhenUnreachableOutsideCI(t *testing.T) {
	t.Setenv(pgtest.EnvURL, "postgres://postgres@127.0.0.1:1/postgres?sslmode=disable")
	t.Setenv("CI", "")
	var inner *testing.T
	t.Run("unreachable", func(t *testing.T) {
		inner = t
		pgtest.New(t)
		t.Error("New returned although the server is unreachable")
	})
	if !inner.Skipped() {
		t.Error("New did not skip the test")
	}
}
