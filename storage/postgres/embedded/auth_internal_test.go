package embedded

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/channels/channeltest"
)

// authTestDir returns a data directory the server's user can reach (when
// the test runs as root, t.TempDir's parent is private to root).
func authTestDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if os.Geteuid() == 0 {
		if err := os.Chmod(filepath.Dir(dir), 0o711); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// startForTest starts the server of dir (logging to logs, if not nil) and
// stops it when the test ends; it skips without server binaries outside CI.
func startForTest(t *testing.T, dir string, logs *channeltest.Log) *Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var logger *slog.Logger
	if logs != nil {
		logger = slog.New(slog.NewTextHandler(logs, nil))
	}
	e, err := Start(ctx, Options{DataDir: dir, Logger: logger})
	if errors.Is(err, ErrNoServerBinaries) && os.Getenv("CI") != "true" {
		t.Skipf("no PostgreSQL server binaries on this machine: %v", err)
	}
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := e.Stop(context.Background()); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return e
}

// connectAs connects to database postgres of e with password (none when
// empty), over TCP or, with socket, over the unix socket.
func connectAs(ctx context.Context, e *Server, password string, socket bool) error {
	u := url.URL{Scheme: "postgres", User: url.User(embeddedUser), Host: "127.0.0.1:" + strconv.Itoa(e.port), Path: "/postgres", RawQuery: "sslmode=disable"}
	if password != "" {
		u.User = url.UserPassword(embeddedUser, password)
	}
	if socket {
		sockDir := e.sockDir
		if sockDir == "" { // an adopted server: where the previous run put it
			sockDir = filepath.Join(e.home, "postgres-socket")
		}
		q := u.Query()
		q.Set("host", sockDir)
		q.Set("port", strconv.Itoa(e.port))
		u.Host, u.RawQuery = "", q.Encode()
	}
	conn, err := pgx.Connect(ctx, u.String())
	if err != nil {
		return err
	}
	return conn.Close(ctx)
}

// checkPasswordOnly fails unless e answers its password and refuses no
// password and a wrong one, on TCP and on the socket.
func checkPasswordOnly(t *testing.T, e *Server) {
	t.Helper()
	ctx := context.Background()
	if err := connectAs(ctx, e, e.password, false); err != nil {
		t.Fatalf("connect with the password: %v", err)
	}
	for _, socket := range []bool{false, true} {
		for _, pw := range []string{"", "wrong"} {
			// A reload is asynchronous: give it a moment.
			var err error
			for deadline := time.Now().Add(5 * time.Second); ; {
				if err = connectAs(ctx, e, pw, socket); err != nil || time.Now().After(deadline) {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if !isAuthError(err) {
				t.Errorf("connect (socket %v) with password %q: %v; want an authentication error", socket, pw, err)
			}
		}
	}
	if trusts, err := e.hbaTrusts(); err != nil || trusts {
		t.Errorf("pg_hba.conf still trusts: %v %v", trusts, err)
	}
}

// checkPasswordFile fails unless the password file is private to this
// process's user and holds e's password.
func checkPasswordFile(t *testing.T, e *Server) {
	t.Helper()
	path := filepath.Join(e.dataDir, passwordFileName)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 || int(fi.Sys().(*syscall.Stat_t).Uid) != os.Geteuid() {
		t.Errorf("password file mode %o uid %d; want 0600 and this process's user", fi.Mode().Perm(), fi.Sys().(*syscall.Stat_t).Uid)
	}
	b, _ := os.ReadFile(path)
	if strings.TrimSpace(string(b)) != e.password || len(e.password) < 32 {
		t.Errorf("password file does not hold the password in use")
	}
}

// checkNoLeak fails if the password shows in the logs or the server log.
func checkNoLeak(t *testing.T, e *Server, logs *channeltest.Log) {
	t.Helper()
	serverLog, _ := os.ReadFile(e.logFile)
	for name, text := range map[string]string{"switchboard log": logs.String(), "server log": string(serverLog)} {
		if strings.Contains(text, e.password) {
			t.Errorf("the %s shows the password", name)
		}
	}
}

func TestEmbeddedPasswordOnFreshInit(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	logs := &channeltest.Log{}
	e := startForTest(t, authTestDir(t), logs)
	checkPasswordFile(t, e)
	checkPasswordOnly(t, e)
	checkNoLeak(t, e, logs)
	if !strings.Contains(e.URL(), ":"+url.PathEscape(e.password)+"@") {
		t.Errorf("URL does not carry the password")
	}
	if s := fmt.Sprint(e); strings.Contains(s, e.password) {
		t.Errorf("printing the Embedded shows the password: %s", s)
	}
}

// legacyTrustCluster makes a cluster the way versions before passwords did
// (initdb --auth=trust) in dir, with a table holding one row.
func legacyTrustCluster(t *testing.T, dir string, keepRunning bool) *Server {
	t.Helper()
	ctx := context.Background()
	e, err := newServer(Options{DataDir: dir})
	if errors.Is(err, ErrNoServerBinaries) && os.Getenv("CI") != "true" {
		t.Skipf("no PostgreSQL server binaries on this machine: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(e.pgData, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := e.user.chown(e.pgData); err != nil {
		t.Fatal(err)
	}
	if err := e.run(ctx, e.bins.initdb, "-D", e.pgData, "-U", embeddedUser, "--auth=trust", "-E", "UTF8", "--locale=C"); err != nil {
		t.Fatal(err)
	}
	if err := e.prepareRuntime(); err != nil {
		t.Fatal(err)
	}
	if err := e.start(ctx, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.stopServer(context.Background()) })
	if err := connectAs(ctx, e, "", false); err != nil {
		t.Fatalf("legacy cluster should trust: %v", err)
	}
	if err := e.createDatabase(ctx); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, e.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE kept (v text); INSERT INTO kept VALUES ('old data')`); err != nil {
		t.Fatal(err)
	}
	if !keepRunning {
		if err := e.stopServer(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// checkKept fails unless the legacy cluster's row is still there.
func checkKept(t *testing.T, e *Server) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, e.URL())
	if err != nil {
		t.Fatalf("connect after the upgrade: %v", err)
	}
	defer conn.Close(ctx)
	var v string
	if err := conn.QueryRow(ctx, `SELECT v FROM kept`).Scan(&v); err != nil || v != "old data" {
		t.Errorf("legacy data after the upgrade = %q, %v", v, err)
	}
}

func TestEmbeddedUpgradesStoppedTrustCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	dir := authTestDir(t)
	legacyTrustCluster(t, dir, false)
	logs := &channeltest.Log{}
	e := startForTest(t, dir, logs)
	checkPasswordFile(t, e)
	checkPasswordOnly(t, e)
	checkKept(t, e)
	checkNoLeak(t, e, logs)
	if !strings.Contains(logs.String(), "now requires the password") {
		t.Errorf("the upgrade is not logged:\n%s", logs)
	}
}

func TestEmbeddedUpgradesRunningTrustServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	dir := authTestDir(t)
	legacy := legacyTrustCluster(t, dir, true) // an older daemon was killed, its server lives on
	before, ok := legacy.runningServer(context.Background())
	if !ok {
		t.Fatal("legacy server not running")
	}
	logs := &channeltest.Log{}
	e := startForTest(t, dir, logs)
	if after, ok := e.runningServer(context.Background()); !ok || after.pid != before.pid {
		t.Errorf("server pid %d (running %v) after the upgrade, want the adopted %d, reloaded not restarted", after.pid, ok, before.pid)
	}
	checkPasswordFile(t, e)
	checkPasswordOnly(t, e)
	checkKept(t, e)
	checkNoLeak(t, e, logs)
}

func TestEmbeddedLostPasswordFileGetsANewPassword(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	dir := authTestDir(t)
	e := startForTest(t, dir, &channeltest.Log{})
	old := e.password
	if err := e.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, passwordFileName)); err != nil {
		t.Fatal(err)
	}
	logs := &channeltest.Log{}
	e = startForTest(t, dir, logs)
	if e.password == old {
		t.Fatal("same password after losing the file")
	}
	checkPasswordFile(t, e)
	checkPasswordOnly(t, e)
	if connectAs(context.Background(), e, old, false) == nil {
		t.Error("the old password still works")
	}
	checkNoLeak(t, e, logs)
}
