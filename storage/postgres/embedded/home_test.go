package embedded_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestEmbeddedPrivateDataDirAsRoot(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	if os.Geteuid() != 0 {
		t.Skip("only root hands the server to another user")
	}
	dir := t.TempDir() // its parent is 0700: the server's user cannot pass
	parentBefore, err := os.Stat(filepath.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	e, logs := startLogged(t, dir)
	home := filepath.Dir(e.ClusterDir())
	t.Cleanup(func() {
		_ = e.Stop(context.Background())
		_ = os.RemoveAll(home)
	})
	if strings.HasPrefix(e.ClusterDir(), dir) {
		t.Fatalf("cluster %s is under the unreachable data_dir", e.ClusterDir())
	}
	if !strings.HasPrefix(home, "/var/lib/switchboard/postgres-") && !strings.HasPrefix(home, filepath.Join(os.TempDir(), "switchboard")) {
		t.Errorf("cluster home %s, want /var/lib/switchboard/postgres-<hash> or under the temp dir", home)
	}
	if n := strings.Count(logs.String(), "cluster lives outside data_dir"); n != 1 || !strings.Contains(logs.String(), home) {
		t.Errorf("where the cluster lives is logged %d times, want once naming %s:\n%s", n, home, logs)
	}
	if parentAfter, err := os.Stat(filepath.Dir(dir)); err != nil || parentAfter.Mode() != parentBefore.Mode() {
		t.Errorf("the data_dir's parent changed mode: %v -> %v (%v)", parentBefore.Mode(), parentAfter.Mode(), err)
	}
	if _, err := os.Stat(filepath.Join(dir, "postgres.password")); err != nil {
		t.Errorf("the password should stay in data_dir: %v", err)
	}
	if err := answersWithin(e.URL(), 5*time.Second); err != nil {
		t.Fatal(err)
	}

	// Started again, the same data_dir finds the same cluster.
	if err := e.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	again, _ := startLogged(t, dir)
	if again.ClusterDir() != e.ClusterDir() {
		t.Errorf("second start uses %s, first used %s", again.ClusterDir(), e.ClusterDir())
	}
	if err := answersWithin(again.URL(), 5*time.Second); err != nil {
		t.Fatal(err)
	}

	// Once data_dir becomes reachable (chmod by the user), the cluster
	// where the data is stays in use rather than a new empty one in place.
	if err := again.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(dir), 0o711); err != nil {
		t.Fatal(err)
	}
	third, _ := startLogged(t, dir)
	if third.ClusterDir() != e.ClusterDir() {
		t.Errorf("with data_dir reachable the cluster is %s, want the existing %s", third.ClusterDir(), e.ClusterDir())
	}
}
