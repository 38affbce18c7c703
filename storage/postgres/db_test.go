package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

func TestOpenServerDownNamesAddressAndHidesPassword(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Port 1 on loopback refuses connections at once. Open is lazy (the
	// daemon must start while the database is down); Ping reports it.
	db, err := postgres.Open(ctx, "postgres://sb:s3cret-pw@127.0.0.1:1/switchboard?sslmode=disable", postgres.Options{})
	if err != nil {
		t.Fatalf("Open must not fail while the server is down: %v", err)
	}
	defer db.Close()
	err = db.Ping(ctx)
	if err == nil {
		t.Fatal("Ping succeeded against a closed port")
	}
	msg := err.Error()
	for _, want := range []string{"127.0.0.1:1", "is it running", "database.url"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %q", msg, want)
		}
	}
	if strings.Contains(msg, "s3cret-pw") {
		t.Errorf("error leaks the password: %q", msg)
	}
}

func TestOpenBadURLHidesPassword(t *testing.T) {
	for _, raw := range []string{
		"postgres://sb:s3cret-pw@127.0.0.1:notaport/x",
		"postgres://sb:s3cret-pw@127.0.0.1/x?sslmode=bogus",
	} {
		_, err := postgres.Open(context.Background(), raw, postgres.Options{})
		if err == nil {
			t.Fatalf("Open(%s) succeeded", raw)
		}
		if strings.Contains(err.Error(), "s3cret-pw") {
			t.Errorf("error leaks the password: %q", err)
		}
		if !strings.Contains(err.Error(), "database.url") {
			t.Errorf("error %q does not say which setting is wrong", err)
		}
	}
}

func TestOpenEmptyURL(t *testing.T) {
	_, err := postgres.Open(context.Background(), "", postgres.Options{})
	if err == nil || !strings.Contains(err.Error(), "database.url") {
		t.Fatalf("Open(\"\") = %v, want an error naming database.url", err)
	}
}

func TestOpenPingPool(t *testing.T) {
	ctx := context.Background()
	db, err := postgres.Open(ctx, pgtest.New(t), postgres.Options{MaxConns: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	if got := db.Pool().Config().MaxConns; got != 3 {
		t.Errorf("MaxConns = %d, want 3", got)
	}
	db.Close()
	if err := db.Ping(ctx); err == nil {
		t.Error("Ping after Close succeeded")
	}
}

func TestOpenPoolSizeDefault(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	db, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := db.Pool().Config().MaxConns; got != postgres.DefaultMaxConns {
		t.Errorf("MaxConns without a setting = %d, want %d", got, postgres.DefaultMaxConns)
	}
	// The URL's own pool_max_conns is kept when Options leave it open...
	withParam := url + "&pool_max_conns=5"
	if !strings.Contains(url, "?") {
		withParam = url + "?pool_max_conns=5"
	}
	fromURL, err := postgres.Open(ctx, withParam, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fromURL.Close()
	if got := fromURL.Pool().Config().MaxConns; got != 5 {
		t.Errorf("MaxConns from the URL = %d, want 5", got)
	}
	// ...and Options win over it.
	both, err := postgres.Open(ctx, withParam, postgres.Options{MaxConns: 7})
	if err != nil {
		t.Fatal(err)
	}
	defer both.Close()
	if got := both.Pool().Config().MaxConns; got != 7 {
		t.Errorf("MaxConns with both set = %d, want 7 (Options)", got)
	}
}

func TestOpenSizesTheStatementCachesForTheMode(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	with := func(param string) string {
		if strings.Contains(url, "?") {
			return url + "&" + param
		}
		return url + "?" + param
	}
	for _, tc := range []struct {
		name, url                string
		statements, descriptions int
		idle                     time.Duration
	}{
		{"default mode: prepared statements, never described", url, 128, 0, time.Minute},
		{"cache_describe mode reads descriptions", with("default_query_exec_mode=cache_describe"), 512, 512, time.Minute},
		{"sized by the URL", with("description_cache_capacity=64&statement_cache_capacity=32"), 32, 64, time.Minute},
		{"idle time set by the URL", with("pool_max_conn_idle_time=10m"), 128, 0, 10 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := postgres.Open(ctx, tc.url, postgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			cfg := db.Pool().Config()
			if got := cfg.ConnConfig.StatementCacheCapacity; got != tc.statements {
				t.Errorf("StatementCacheCapacity = %d, want %d", got, tc.statements)
			}
			if got := cfg.ConnConfig.DescriptionCacheCapacity; got != tc.descriptions {
				t.Errorf("DescriptionCacheCapacity = %d, want %d", got, tc.descriptions)
			}
			if cfg.MaxConnIdleTime != tc.idle {
				t.Errorf("MaxConnIdleTime = %v, want %v", cfg.MaxConnIdleTime, tc.idle)
			}
			// A query with arguments goes through the mode's cache: it must
			// work in every mode (a missing cache fails it).
			var n int
			if err := db.Pool().QueryRow(ctx, "SELECT $1::int + 1", 41).Scan(&n); err != nil || n != 42 {
				t.Fatalf("query: %d, %v", n, err)
			}
		})
	}
}

// TestConnectionKilledWhileIdleIsRetried: the pool pings a connection only
// after it sat unused for 10 s (pgx: 1 s), so one that broke a moment ago
// is handed out unchecked; its statement fails, and the store runs it
// again on a new connection instead of failing the caller.
func TestConnectionKilledWhileIdleIsRetried(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db := pgtest.OpenWith(t, ctx, postgres.Options{MaxConns: 1})
	if err := db.Heartbeat(ctx, "replica-a"); err != nil {
		t.Fatalf("first heartbeat: %v", err)
	}
	admin, err := pgx.Connect(ctx, db.Pool().Config().ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	var pid int32
	if err := admin.QueryRow(ctx, `SELECT pid FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`).Scan(&pid); err != nil {
		t.Fatalf("find the pool's one connection: %v", err)
	}
	killed := time.Now()
	if _, err := admin.Exec(ctx, "SELECT pg_terminate_backend($1)", pid); err != nil {
		t.Fatal(err)
	}
	for gone := false; !gone; {
		if err := admin.QueryRow(ctx, "SELECT NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1)", pid).Scan(&gone); err != nil {
			t.Fatal(err)
		}
		if time.Since(killed) > 10*time.Second {
			t.Fatal("the terminated backend still runs after 10 s")
		}
		if !gone {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if err := db.Heartbeat(ctx, "replica-a"); err != nil {
		t.Fatalf("heartbeat on the pool whose connection was killed %s ago: %v", time.Since(killed), err)
	}
}
