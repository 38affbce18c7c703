package embedded

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSocketDirFallsBackWhenPathTooLong(t *testing.T) {
	long := filepath.Join(t.TempDir(), strings.Repeat("d", 100))
	if err := os.MkdirAll(long, 0o700); err != nil {
		t.Fatal(err)
	}
	e := &Server{dataDir: long}
	e.setHome(long)
	if err := e.prepareRuntime(); err != nil {
		t.Fatal(err)
	}
	defer e.removeTempSock()
	if !e.tempSock || len(e.sockDir)+len("/.s.PGSQL.65535") > maxSocketPath {
		t.Errorf("socket dir %s (temp %v) for a data dir of %d bytes", e.sockDir, e.tempSock, len(long))
	}

	short := t.TempDir()
	e = &Server{dataDir: short}
	e.setHome(short)
	if err := e.prepareRuntime(); err != nil {
		t.Fatal(err)
	}
	if e.tempSock || e.sockDir != filepath.Join(short, "postgres-socket") {
		t.Errorf("short data dir: socket dir %s (temp %v), want it under the data dir", e.sockDir, e.tempSock)
	}
}
