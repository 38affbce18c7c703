package fs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/tools"
	"github.com/switchboard-chat/switchboard/tools/exec"
	"github.com/switchboard-chat/switchboard/tools/fs"
	"github.com/switchboard-chat/switchboard/tools/toolstest"
)

// Markers of content the fs tools must never show or change.
const (
	outsideMark = "TOP-SECRET-OUTSIDE"
	gitMark     = "GIT-CONFIG-MARK"
	envMark     = "ENV-FILE-MARK"
)

// fsWorld is a workspace with files, denied paths and symlinks in and out,
// next to a directory outside it.
type fsWorld struct {
	tools   map[string]tools.Tool
	ws      string // the session's workspace
	outside string // a directory outside it
}

func newFSWorld(t *testing.T) *fsWorld {
	t.Helper()
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	toolstest.Must(t, os.MkdirAll(outside, 0o755))
	toolstest.Must(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte(outsideMark+"\n"), 0o644))
	wsp := exec.Workspaces{Root: filepath.Join(base, "workspaces")}
	ws, err := wsp.Dir(toolstest.Call.Session)
	toolstest.Must(t, err)
	files := map[string]string{
		"notes.txt": "line one\nline two\nline three\n", "sub/a.txt": "alpha\nbeta\n",
		".git/config": gitMark + "\n", ".env": envMark + "\n", "sub/.env": envMark + "\n",
		"bin.dat": "\x00\x01\x02binary",
	}
	for name, content := range files {
		toolstest.Must(t, os.MkdirAll(filepath.Join(ws, filepath.Dir(name)), 0o755))
		toolstest.Must(t, os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644))
	}
	links := map[string]string{
		"link-out": filepath.Join(outside, "secret.txt"), "link-out-rel": "../../outside/secret.txt",
		"dir-out": outside, "dir-out-rel": "../../outside", "link-in": "notes.txt", "link-git": ".git/config",
		"dir-git": ".git", "loop": "loop", "sub/up": "..", "sub/up2": "../..", "chain1": "chain2", "chain2": "link-out",
	}
	for name, target := range links {
		toolstest.Must(t, os.Symlink(target, filepath.Join(ws, name)))
	}
	w := &fsWorld{tools: map[string]tools.Tool{}, ws: ws, outside: outside}
	for _, tool := range fs.NewTools(fs.Options{Workspaces: wsp}) {
		w.tools[tool.Name()] = tool
	}
	return w
}

// run calls tool with args given as a Go value.
func (w *fsWorld) run(tool string, args any) tools.Result {
	raw, _ := json.Marshal(args)
	return w.tools[tool].Execute(toolstest.Context(), raw)
}

// leaked reports whether a result shows protected content.
func leaked(r tools.Result) bool {
	return strings.Contains(r.ForLLM, outsideMark) || strings.Contains(r.ForLLM, gitMark) || strings.Contains(r.ForLLM, envMark)
}

// TestFSTraversalCorpus runs every fs tool on paths that try to leave the
// workspace or reach denied paths: nothing outside or denied is read,
// listed, found, written or edited.
func TestFSTraversalCorpus(t *testing.T) {
	w := newFSWorld(t)
	hostile := []string{
		"..", "../", "../..", "../outside/secret.txt", "../../outside/secret.txt", "sub/../../outside/secret.txt",
		"sub/../../../", "./../outside", "/etc/passwd", "/etc", filepath.Join(w.outside, "secret.txt"), w.outside,
		filepath.Join(w.ws, "..", "..", "outside", "secret.txt"), "link-out", "link-out-rel", "dir-out", "dir-out/secret.txt",
		"dir-out-rel/secret.txt", "chain1", "loop", "sub/up/../outside/secret.txt", "sub/up2/outside/secret.txt",
		"sub/up2", ".git/config", ".git", "./.git/config", "sub/../.git/config", "dir-git/config", "dir-git", "link-git",
		".env", "sub/.env", "./sub/.env", filepath.Join(w.ws, ".env"), "a\x00b", "ü/../../outside/secret.txt",
		"\\..\\outside\\secret.txt", strings.Repeat("a/", 300) + "../../../../x", "....//outside",
	}
	cases := 0
	// Reads first, then globs, then writes (whose new files would show up
	// in globs).
	for _, tool := range []string{"read_file", "list_files", "search", "glob", "write_file", "edit"} {
		if tool == "glob" {
			for _, pattern := range []string{"**", "**/*", "*", ".*", ".git/*", "**/.env", "dir-out/*", "../*", "/etc/*",
				"**/secret.txt", "link-*", "sub/up2/**", "dir-git/*", "sub/up/**"} {
				cases++
				r := w.run("glob", map[string]any{"pattern": pattern})
				if leaked(r) {
					t.Errorf("glob %q leaked content: %q", pattern, r.ForLLM)
				}
				if r.IsError || strings.HasPrefix(r.ForLLM, "no files match") {
					continue
				}
				for _, line := range strings.Split(r.ForLLM, "\n") {
					for _, part := range strings.Split(line, "/") {
						if part == ".git" || part == ".env" || part == "secret.txt" || part == "outside" {
							t.Errorf("glob %q showed %q", pattern, line)
						}
					}
				}
			}
			continue
		}
		for _, p := range hostile {
			args := map[string]any{"path": p}
			switch tool {
			case "search":
				args["pattern"] = "MARK|SECRET"
			case "write_file":
				args["content"] = "pwned"
			case "edit":
				args["old_text"], args["new_text"] = "MARK", "pwned"
			}
			cases++
			if r := w.run(tool, args); leaked(r) {
				t.Errorf("%s %q leaked protected content: %.200q", tool, p, r.ForLLM)
			}
		}
	}
	cases++
	if r := w.run("search", map[string]any{"pattern": "."}); leaked(r) {
		t.Errorf("a search of everything leaked: %q", r.ForLLM)
	}
	cases++
	if r := w.run("list_files", map[string]any{}); strings.Contains(r.ForLLM, ".git") || strings.Contains(r.ForLLM, ".env") {
		t.Errorf("list_files shows denied paths: %q", r.ForLLM)
	}
	if cases < 60 {
		t.Fatalf("corpus has %d cases, want at least 60", cases)
	}
	// Nothing outside or denied changed (writes that stayed inside, like
	// sub/up/../x cleaned to sub/x, may succeed).
	if b, _ := os.ReadFile(filepath.Join(w.outside, "secret.txt")); string(b) != outsideMark+"\n" {
		t.Errorf("outside file changed: %q", b)
	}
	if entries, _ := os.ReadDir(w.outside); len(entries) != 1 {
		t.Errorf("files appeared outside the workspace: %v", entries)
	}
	if b, _ := os.ReadFile(filepath.Join(w.ws, ".git", "config")); string(b) != gitMark+"\n" {
		t.Errorf("denied file changed: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(w.ws, ".env")); string(b) != envMark+"\n" {
		t.Errorf(".env changed: %q", b)
	}
}

// TestFSSymlinkSwappedMidCall swaps a symlink between a file inside and a
// file outside while read_file and write_file run through it: the outside
// file is never read or written.
func TestFSSymlinkSwappedMidCall(t *testing.T) {
	w := newFSWorld(t)
	link := filepath.Join(w.ws, "swap")
	toolstest.Must(t, os.Symlink("notes.txt", link))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var swaps atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		targets := []string{"notes.txt", filepath.Join(w.outside, "secret.txt")}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			tmp := link + ".tmp"
			_ = os.Remove(tmp)
			if os.Symlink(targets[i%2], tmp) == nil && os.Rename(tmp, link) == nil {
				swaps.Add(1)
			}
		}
	}()
	deadline := time.Now().Add(2 * time.Second)
	calls := 0
	for time.Now().Before(deadline) || calls < 200 {
		calls++
		if r := w.run("read_file", map[string]any{"path": "swap"}); leaked(r) {
			t.Fatalf("read through a swapped symlink leaked: %q", r.ForLLM)
		}
		w.run("write_file", map[string]any{"path": "swap", "content": "written through swap"})
		if calls > 5000 {
			break
		}
	}
	close(stop)
	wg.Wait()
	if b, _ := os.ReadFile(filepath.Join(w.outside, "secret.txt")); string(b) != outsideMark+"\n" {
		t.Fatalf("the outside file was written through the swapped symlink: %q", b)
	}
	t.Logf("%d calls while the link was swapped %d times", calls, swaps.Load())
}

func TestFSToolsDoTheirJobs(t *testing.T) {
	w := newFSWorld(t)
	check := func(r tools.Result, wantErr bool, want string) {
		t.Helper()
		if r.IsError != wantErr || !strings.Contains(r.ForLLM, want) {
			t.Errorf("got %+v; want error=%v containing %q", r, wantErr, want)
		}
	}
	check(w.run("read_file", map[string]any{"path": "notes.txt"}), false, "line one\nline two\nline three\n")
	check(w.run("read_file", map[string]any{"path": "notes.txt", "start_line": 2, "end_line": 2}), false, "line two\n")
	check(w.run("read_file", map[string]any{"path": "notes.txt", "start_line": 9}), true, "has 3 lines")
	check(w.run("read_file", map[string]any{"path": "link-in"}), false, "line one")
	check(w.run("read_file", map[string]any{"path": "bin.dat"}), true, "binary file")
	check(w.run("read_file", map[string]any{"path": "sub"}), true, "is a directory")
	check(w.run("read_file", map[string]any{"path": "nope.txt"}), true, "does not exist")
	check(w.run("read_file", map[string]any{}), true, `missing "path"`)
	check(w.run("read_file", map[string]any{"path": filepath.Join(w.ws, "notes.txt")}), false, "line one")

	check(w.run("write_file", map[string]any{"path": "new/dir/f.txt", "content": "hello\n"}), false, "wrote 6 bytes")
	if b, _ := os.ReadFile(filepath.Join(w.ws, "new", "dir", "f.txt")); string(b) != "hello\n" {
		t.Errorf("write_file wrote %q", b)
	}
	check(w.run("write_file", map[string]any{"path": "big.txt", "content": strings.Repeat("x", 2<<20)}), true, "at most")
	check(w.run("write_file", map[string]any{"path": "sub", "content": "x"}), true, "is a directory")

	check(w.run("edit", map[string]any{"path": "notes.txt", "old_text": "line two", "new_text": "LINE 2"}), false, "replaced 1")
	check(w.run("edit", map[string]any{"path": "notes.txt", "old_text": "absent", "new_text": "x"}), true, "not found")
	check(w.run("edit", map[string]any{"path": "notes.txt", "old_text": "line", "new_text": "row"}), true, "matches 2 places")
	check(w.run("edit", map[string]any{"path": "notes.txt", "old_text": "line", "new_text": "row", "replace_all": true}), false, "replaced 2")
	if b, _ := os.ReadFile(filepath.Join(w.ws, "notes.txt")); string(b) != "row one\nLINE 2\nrow three\n" {
		t.Errorf("edits produced %q", b)
	}
	check(w.run("edit", map[string]any{"path": "notes.txt", "old_text": "", "new_text": "x"}), true, "empty")

	list := w.run("list_files", map[string]any{})
	for _, want := range []string{"notes.txt  ", "sub/", "link-in@"} {
		check(list, false, want)
	}
	check(w.run("list_files", map[string]any{"path": "notes.txt"}), true, "is a file")

	check(w.run("search", map[string]any{"pattern": "^alp"}), false, "sub/a.txt:1: alpha")
	check(w.run("search", map[string]any{"pattern": "(unclosed"}), true, "not a valid regular expression")
	check(w.run("search", map[string]any{"pattern": "nothing-like-this"}), false, "no matches")

	check(w.run("glob", map[string]any{"pattern": "**/*.txt"}), false, "new/dir/f.txt\nnotes.txt\nsub/a.txt")
	check(w.run("glob", map[string]any{"pattern": "/abs/*"}), true, "not a usable pattern")
	check(w.run("glob", map[string]any{"pattern": "*.nothing"}), false, "no files match")
}

func TestFSNeedsASession(t *testing.T) {
	fsTools := fs.NewTools(fs.Options{Workspaces: exec.Workspaces{Root: t.TempDir()}})
	for _, tool := range fsTools {
		r := tool.Execute(context.Background(), json.RawMessage(`{"path":"x","pattern":"x","content":"x","old_text":"a","new_text":"b"}`))
		if !r.IsError || !strings.Contains(r.ForLLM, "no session") {
			t.Errorf("%s without a session: %+v", tool.Name(), r)
		}
	}
	if got := len(fsTools); got != 6 {
		t.Fatalf("NewTools returned %d tools, want 6", got)
	}
	names := fmt.Sprint(func() []string {
		var n []string
		for _, tool := range fsTools {
			n = append(n, tool.Name())
		}
		return n
	}())
	if names != "[read_file write_file edit list_files search glob]" {
		t.Errorf("tool names %s", names)
	}
}

// TestWorkspacesPerUserForOpenAgents: an open agent gives each person one
// workspace across chats; a predefined agent one per chat.
func TestWorkspacesPerUserForOpenAgents(t *testing.T) {
	wsp := exec.Workspaces{Root: t.TempDir(), PerUser: func(agent string) bool { return agent == "pal" }}
	set := map[string]tools.Tool{}
	for _, tool := range fs.NewTools(fs.Options{Workspaces: wsp}) {
		set[tool.Name()] = tool
	}
	run := func(agent, user, chat, tool string, args string) tools.Result {
		c := tools.Call{Channel: "telegram", ChatID: chat, UserID: user, Agent: agent, Session: agent + "/telegram:" + chat}
		return set[tool].Execute(tools.WithCall(context.Background(), c), json.RawMessage(args))
	}
	for _, agent := range []string{"pal", "ops"} {
		if r := run(agent, "telegram:1", "10", "write_file", `{"path":"f.txt","content":"from chat 10"}`); r.IsError {
			t.Fatal(r.ForLLM)
		}
	}
	if r := run("pal", "telegram:1", "20", "read_file", `{"path":"f.txt"}`); r.ForLLM != "from chat 10" {
		t.Errorf("open agent, same person, other chat: %+v", r)
	}
	if r := run("pal", "telegram:2", "10", "read_file", `{"path":"f.txt"}`); !r.IsError {
		t.Errorf("open agent, another person: %+v", r)
	}
	if r := run("ops", "telegram:1", "20", "read_file", `{"path":"f.txt"}`); !r.IsError {
		t.Errorf("predefined agent, other chat: %+v", r)
	}
	if r := run("ops", "telegram:2", "10", "read_file", `{"path":"f.txt"}`); r.ForLLM != "from chat 10" {
		t.Errorf("predefined agent, same chat, another person: %+v", r)
	}
}
