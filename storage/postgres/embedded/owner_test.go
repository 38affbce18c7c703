package embedded_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/channels/channeltest"
	"github.com/switchboard-chat/switchboard/storage/postgres/embedded"
)

// startLogged is startEmbedded with the logs kept.
func startLogged(t *testing.T, dir string) (*embedded.Server, *channeltest.Log) {
	t.Helper()
	logs := &channeltest.Log{}
	return embedded.StartForTest(t, dir, logs), logs
}

// postmasterPID returns the pid in e's postmaster.pid, 0 if none.
func postmasterPID(e *embedded.Server) int {
	raw, err := os.ReadFile(filepath.Join(e.ClusterDir(), "postmaster.pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.SplitN(string(raw), "\n", 2)[0])
	return pid
}

// answersWithin polls until url accepts a query or d passes.
func answersWithin(url string, d time.Duration) error {
	var err error
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		var conn *pgx.Conn
		if conn, err = pgx.Connect(ctx, url); err == nil {
			err = conn.Ping(ctx)
			conn.Close(ctx)
		}
		cancel()
		if err == nil {
			return nil
		}
	}
	return err
}

func TestEmbeddedReuserStopLeavesOwnersServerRunning(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	dir := reachableTempDir(t)
	owner, _ := startLogged(t, dir)
	pid := postmasterPID(owner)

	reuser, logs := startLogged(t, dir) // `switchboard chat` while serve runs
	if reuser.URL() != owner.URL() {
		t.Fatalf("reuser URL %q, want the owner's", reuser.URL())
	}
	if err := reuser.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "leaving the server running") {
		t.Errorf("the reuser does not say it left the server running:\n%s", logs)
	}
	if err := answersWithin(owner.URL(), 2*time.Second); err != nil {
		t.Fatalf("the owner's server stopped with the reuser: %v", err)
	}
	if got := postmasterPID(owner); got != pid {
		t.Errorf("postmaster pid %d after the reuser's Stop, want %d untouched", got, pid)
	}
}

func TestEmbeddedWatchdogRestartsKilledServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	dir := reachableTempDir(t)
	owner, logs := startLogged(t, dir)
	pid := postmasterPID(owner)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := answersWithin(owner.URL(), 15*time.Second); err != nil {
		t.Fatalf("the owner did not restart its killed server: %v\n%s", err, logs)
	}
	if got := postmasterPID(owner); got == pid || got == 0 {
		t.Errorf("postmaster pid %d, want a new server", got)
	}
	if n := strings.Count(logs.String(), "the server is gone"); n != 1 {
		t.Errorf("the outage is logged %d times, want once:\n%s", n, logs)
	}
	if err := owner.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(owner.ClusterDir(), "postmaster.pid")); !os.IsNotExist(err) {
		t.Errorf("the restarted server outlived Stop: %v", err)
	}
}

func TestEmbeddedReuserTakesOverWhenOwnerStops(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	dir := reachableTempDir(t)
	owner, _ := startLogged(t, dir)
	reuser, logs := startLogged(t, dir)
	if err := owner.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := answersWithin(reuser.URL(), 15*time.Second); err != nil {
		t.Fatalf("the reuser did not bring the server back after its owner stopped: %v\n%s", err, logs)
	}
	if !strings.Contains(logs.String(), "this process runs it now") {
		t.Errorf("the takeover is not logged:\n%s", logs)
	}
	if err := reuser.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(reuser.ClusterDir(), "postmaster.pid")); !os.IsNotExist(err) {
		t.Errorf("the server outlived the Stop of the handle that took it over: %v", err)
	}
}
