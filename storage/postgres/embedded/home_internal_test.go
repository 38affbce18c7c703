package embedded

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEmbeddedHomeRefusesForeignDirectories(t *testing.T) {
	me := &serverUser{name: "me", uid: uint32(os.Getuid()), gid: uint32(os.Getgid())}
	root := filepath.Join(t.TempDir(), "switchboard")
	home := filepath.Join(root, "postgres-0123456789ab")
	if err := makeHome(home, "/srv/a", me); err != nil {
		t.Fatalf("makeHome: %v", err)
	}
	if !homeBelongsTo(home, "/srv/a") || homeBelongsTo(home, "/srv/b") {
		t.Error("the marker does not name the data_dir")
	}
	if err := makeHome(home, "/srv/a", me); err != nil {
		t.Errorf("makeHome again for the same data_dir: %v", err)
	}
	if err := makeHome(home, "/srv/b", me); err == nil || !strings.Contains(err.Error(), "/srv/a") {
		t.Errorf("makeHome for another data_dir = %v; want it refused naming /srv/a", err)
	}

	// A parent others may write could hold a planted home.
	if err := os.Chmod(root, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := makeHome(home, "/srv/a", me); err == nil || !strings.Contains(err.Error(), "written by other users") {
		t.Errorf("makeHome under a world-writable directory = %v", err)
	}
	if homeBelongsTo(home, "/srv/a") {
		t.Error("a home under a world-writable directory is trusted")
	}
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}

	// A symlink in place of the home is refused.
	link := filepath.Join(root, "postgres-link")
	if err := os.Symlink(home, link); err != nil {
		t.Fatal(err)
	}
	if err := makeHome(link, "/srv/a", me); err == nil {
		t.Error("makeHome accepted a symlink")
	}
}

func TestEmbeddedFallbackHomesAreStablePerDataDir(t *testing.T) {
	a, b := fallbackHomes("/srv/a"), fallbackHomes("/srv/b")
	if len(a) != len(fallbackRoots) || a[0] != fallbackHomes("/srv/a")[0] || a[0] == b[0] {
		t.Errorf("fallback homes %v and %v", a, b)
	}
	if !strings.HasPrefix(a[0], "/var/lib/switchboard/postgres-") || !strings.HasPrefix(a[1], filepath.Join(os.TempDir(), "switchboard", "postgres-")) {
		t.Errorf("fallback homes %v", a)
	}
}
