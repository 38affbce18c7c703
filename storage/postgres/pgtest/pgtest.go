// Package pgtest creates throwaway PostgreSQL databases for tests: each call
// makes a fresh database on the test server and drops it when the test ends.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/storage/postgres"
)

// EnvURL names the environment variable holding the URL of the test server.
const EnvURL = "SWITCHBOARD_TEST_DATABASE_URL"

// DefaultURL is the test server used when EnvURL is unset.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// ServerURL returns the URL of the test server: $SWITCHBOARD_TEST_DATABASE_URL
// or DefaultURL.
func ServerURL() string {
	if u := os.Getenv(EnvURL); u != "" {
		return u
	}
	return DefaultURL
}

// New creates an empty database sbtest_<random> on the test server and
// returns its URL; the database is dropped when the test ends. When the
// server cannot be reached the test is skipped, or fails when CI=true.
func New(t testing.TB) string {
	t.Helper()
	server := ServerURL()
	base, err := url.Parse(server)
	if err != nil || (base.Scheme != "postgres" && base.Scheme != "postgresql") {
		t.Fatalf("pgtest: %s must be a postgres:// URL", EnvURL)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		where := base.Host
		if os.Getenv("CI") == "true" {
			t.Fatalf("PostgreSQL not reachable at %s: %v; start it (see README) or set %s — integration tests must not skip in CI", where, err, EnvURL)
		}
		t.Skipf("PostgreSQL not reachable at %s (%v); start it or set %s to run this test", where, err, EnvURL)
	}
	defer conn.Close(context.Background())

	var suffix [8]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		t.Fatalf("pgtest: random name: %v", err)
	}
	name := "sbtest_" + hex.EncodeToString(suffix[:])
	ident := pgx.Identifier{name}.Sanitize()
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+ident); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, server)
		if err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})

	u := *base
	u.Path = "/" + name
	u.RawPath = ""
	return u.String()
}

// Open creates a throwaway database (see New), opens it and applies the
// migrations. The pool is closed before the database is dropped.
func Open(t testing.TB, ctx context.Context) *postgres.DB {
	t.Helper()
	return OpenWith(t, ctx, postgres.Options{})
}

// OpenWith is Open with options (tracing, pool size).
func OpenWith(t testing.TB, ctx context.Context, opts postgres.Options) *postgres.DB {
	t.Helper()
	dbURL := New(t)
	db, err := postgres.Open(ctx, dbURL, opts)
	if err != nil {
		t.Fatalf("pgtest: open test database: %v", err)
	}
	t.Cleanup(db.Close)
	if err := postgres.Migrate(ctx, db); err != nil {
		t.Fatalf("pgtest: migrate: %v", err)
	}
	return db
}
