package embedded_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/embedded"
)

// reachableTempDir is the package's authTestDir (see export_test.go).
var reachableTempDir = embedded.ReachableTempDir

// startEmbedded starts the server of dir and stops it when the test ends.
func startEmbedded(t *testing.T, dir string) *embedded.Server {
	t.Helper()
	return embedded.StartForTest(t, dir, nil)
}

// openEmbedded opens and migrates the database of e.
func openEmbedded(t *testing.T, e *embedded.Server) *postgres.DB {
	t.Helper()
	ctx := context.Background()
	db, err := postgres.Open(ctx, e.URL(), postgres.Options{})
	if err != nil {
		t.Fatalf("Open(%s): %v", e.URL(), err)
	}
	if err := postgres.Migrate(ctx, db); err != nil {
		db.Close()
		t.Fatalf("Migrate: %v", err)
	}
	return db
}

func TestEmbeddedLifecycle(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	ctx := context.Background()
	dir := reachableTempDir(t)
	pgData := filepath.Join(dir, "postgres")

	e := startEmbedded(t, dir)
	if !strings.HasPrefix(e.URL(), "postgres://switchboard:") || !strings.Contains(e.URL(), "@127.0.0.1:") || !strings.HasSuffix(e.URL(), "/switchboard?sslmode=disable") {
		t.Errorf("URL() = %q", e.URL())
	}
	if os.Geteuid() == 0 {
		fi, err := os.Stat(pgData)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Sys().(*syscall.Stat_t).Uid == 0 {
			t.Error("running as root, the data directory belongs to root: the server must run as another user")
		}
	}
	db := openEmbedded(t, e)
	if _, err := db.Append(ctx, "a/keep", agentcore.Message{Role: agentcore.RoleUser, Content: "remember me"}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	// The daemon was killed but its server survived: a new start reuses it.
	again := startEmbedded(t, dir)
	if again.URL() != e.URL() {
		t.Errorf("second start while running: URL %q, want the running server's %q", again.URL(), e.URL())
	}
	if err := e.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := e.Stop(ctx); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if err := again.Stop(ctx); err != nil {
		t.Errorf("Stop through the other handle after the server is down: %v", err)
	}
	if _, err := os.Stat(filepath.Join(pgData, "postmaster.pid")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("postmaster.pid after Stop: %v", err)
	}

	// Restarting on the same directory keeps the data.
	restarted := startEmbedded(t, dir)
	db = openEmbedded(t, restarted)
	msgs, err := db.Load(ctx, "a/keep", 0)
	db.Close()
	if err != nil || len(msgs) != 1 || msgs[0].Content != "remember me" {
		t.Fatalf("after restart Load = %#v, %v; want the message stored before", msgs, err)
	}
	if err := restarted.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	// Stale postmaster.pid files: the pid is now another program (this
	// test), or dead (the server was killed with the daemon).
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	for name, pid := range map[string]int{"live non-postgres pid": os.Getpid(), "dead pid": dead.Process.Pid} {
		bogus := strconv.Itoa(pid) + "\n" + pgData + "\n1700000000\n5999\n/nonexistent\n127.0.0.1\n  1234  5678\nready   \n"
		if err := os.WriteFile(filepath.Join(pgData, "postmaster.pid"), []byte(bogus), 0o600); err != nil {
			t.Fatal(err)
		}
		s := startEmbedded(t, dir)
		if strings.Contains(s.URL(), ":5999/") {
			t.Errorf("%s: reused the port of a stale pid file", name)
		}
		db := openEmbedded(t, s)
		if err := db.Ping(ctx); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		db.Close()
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	}

	// The server itself is killed (kill -9) and switchboard starts again
	// straight away, while the dead server may still be going away.
	s := startEmbedded(t, dir)
	raw, err := os.ReadFile(filepath.Join(pgData, "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.SplitN(string(raw), "\n", 2)[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s = startEmbedded(t, dir)
	db = openEmbedded(t, s)
	defer db.Close()
	if msgs, err := db.Load(ctx, "a/keep", 0); err != nil || len(msgs) != 1 {
		t.Errorf("after kill -9 and restart Load = %#v, %v; want the stored message", msgs, err)
	}
}

func TestEmbeddedMissingBinaries(t *testing.T) {
	_, err := embedded.Start(context.Background(), embedded.Options{
		DataDir: t.TempDir(),
		BinDir:  t.TempDir(), // holds no initdb or pg_ctl
	})
	if !errors.Is(err, embedded.ErrNoServerBinaries) {
		t.Fatalf("Start without binaries = %v, want ErrNoServerBinaries", err)
	}
	for _, want := range []string{"initdb", "apt-get install postgresql", "database.url", "SWITCHBOARD_DATABASE_URL"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestEmbeddedNeedsDataDir(t *testing.T) {
	_, err := embedded.Start(context.Background(), embedded.Options{})
	if err == nil || !strings.Contains(err.Error(), "data_dir") {
		t.Fatalf("Start without DataDir = %v, want an error naming data_dir", err)
	}
}
