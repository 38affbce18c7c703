package embedded

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func fakeBinDir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"initdb", "pg_ctl"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFindServerBinariesPrefersPathThenNewestVersion(t *testing.T) {
	root := t.TempDir()
	lib := filepath.Join(root, "lib")
	for _, v := range []string{"9.6", "16", "15", "notaversion"} {
		fakeBinDir(t, filepath.Join(lib, v, "bin"))
	}
	glob := filepath.Join(lib, "*", "bin")

	b, err := findServerBinaries("", "", glob)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(lib, "16", "bin", "pg_ctl"); b.pgCtl != want {
		t.Errorf("pg_ctl = %s, want the newest version %s", b.pgCtl, want)
	}

	// A directory on PATH holding both wins; one holding only initdb does not.
	onPath := filepath.Join(root, "path")
	fakeBinDir(t, onPath)
	half := filepath.Join(root, "half")
	if err := os.MkdirAll(half, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(half, "initdb"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err = findServerBinaries("", half+string(os.PathListSeparator)+onPath, glob)
	if err != nil {
		t.Fatal(err)
	}
	if b.initdb != filepath.Join(onPath, "initdb") || b.pgCtl != filepath.Join(onPath, "pg_ctl") {
		t.Errorf("found %+v, want both from %s", b, onPath)
	}
}

func TestFindServerBinariesNone(t *testing.T) {
	empty := t.TempDir()
	_, err := findServerBinaries("", empty, filepath.Join(empty, "*", "bin"))
	if !errors.Is(err, ErrNoServerBinaries) {
		t.Fatalf("err = %v, want ErrNoServerBinaries", err)
	}
	if !strings.Contains(err.Error(), "apt-get install postgresql") || !strings.Contains(err.Error(), "set database.url") {
		t.Errorf("error %q does not say what to do", err)
	}
	// A non-executable file does not count.
	if err := os.WriteFile(filepath.Join(empty, "initdb"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(empty, "pg_ctl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := findServerBinaries(empty, "", ""); !errors.Is(err, ErrNoServerBinaries) {
		t.Errorf("non-executable binaries accepted: %v", err)
	}
}
