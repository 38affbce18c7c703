package fs_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/switchboard-chat/switchboard/tools"
	"github.com/switchboard-chat/switchboard/tools/exec"
	"github.com/switchboard-chat/switchboard/tools/fs"
)

func TestFilesOpenIsJailed(t *testing.T) {
	wsp := exec.Workspaces{Root: t.TempDir()}
	call := tools.Call{Session: "s1", Agent: "a"}
	dir, err := wsp.For(call)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	files := fs.NewFiles(fs.Options{Workspaces: wsp})
	f, info, err := files.Open(call, "a.txt")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(f)
	f.Close()
	if string(data) != "hello" || info.Size() != 5 {
		t.Fatalf("Open(a.txt) read %q (%d bytes)", data, info.Size())
	}
	for p, want := range map[string]string{
		"pipe": "is not a regular file", ".": "is a directory", "../x": "outside the workspace",
		".git/config": "not accessible", "missing": "does not exist",
	} {
		if f, _, err := files.Open(call, p); err == nil || !strings.Contains(err.Error(), want) {
			if f != nil {
				f.Close()
			}
			t.Errorf("Open(%q) = %v, want an error saying %q", p, err, want)
		}
	}
	if _, _, err := files.Open(tools.Call{}, "a.txt"); err == nil {
		t.Error("Open without a session opened a file")
	}
}
