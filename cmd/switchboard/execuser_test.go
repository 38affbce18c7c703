package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlaceExec: as root, exec runs as nobody, in data_dir/workspaces when
// nobody can reach it and in a folder under the temporary directory when a
// parent of data_dir is closed (a clone under /root).
func TestPlaceExec(t *testing.T) {
	if os.Geteuid() != 0 {
		p, err := placeExec(t.TempDir(), "", slog.New(slog.DiscardHandler))
		if err != nil || p.user != nil {
			t.Fatalf("not root: placement %+v, %v; want the daemon's own user", p, err)
		}
		return
	}
	open := reachableDir(t)
	p, err := placeExec(filepath.Join(open, "data"), "", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if p.user == nil || p.user.UID == 0 || p.workspaces != filepath.Join(open, "data", "workspaces") {
		t.Fatalf("reachable data_dir: %+v", p)
	}
	if !strings.Contains(p.describe(), "not root") {
		t.Fatalf("describe = %q", p.describe())
	}

	closed := t.TempDir() // 0700 parent: nobody cannot pass
	p, err = placeExec(filepath.Join(closed, "data"), "", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(p.workspaces) })
	if strings.HasPrefix(p.workspaces, closed) || !p.user.CanReach(p.workspaces) {
		t.Fatalf("closed data_dir: workspaces %s (reachable: %v)", p.workspaces, p.user.CanReach(p.workspaces))
	}
	if _, err := placeExec(open, "root", slog.New(slog.DiscardHandler)); err == nil {
		t.Fatal("exec.user root accepted")
	}
}
