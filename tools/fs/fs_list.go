package fs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/switchboard-chat/switchboard/tools"
)

// ListFiles is the list_files tool: the entries of one workspace folder.
type ListFiles struct{ j *jail }

// Name implements Tool.
func (*ListFiles) Name() string { return "list_files" }

// Description implements Tool.
func (*ListFiles) Description() string {
	return "List the files and folders in a folder of this conversation's workspace (default: the workspace itself). " +
		"Folders end with /."
}

// Parameters implements Tool.
func (*ListFiles) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"path":{"type":"string","description":"Folder relative to the workspace; default ."}},"additionalProperties":false}`)
}

// SideEffect implements Tool.
func (*ListFiles) SideEffect() tools.SideEffect { return tools.SideEffectReadOnly }

// Execute implements Tool.
func (t *ListFiles) Execute(ctx context.Context, raw json.RawMessage) tools.Result {
	var a struct {
		Path string `json:"path"`
	}
	if err := fsArgs(raw, &a, `{"path"?: "folder"}`); err != nil {
		return tools.ErrorResult(err.Error())
	}
	call, _ := tools.CallFrom(ctx)
	root, rel, err := t.j.openPath(call, a.Path)
	if err != nil {
		return tools.ErrorResult(err.Error())
	}
	defer root.Close()
	shown := a.Path
	if shown == "" {
		shown = "."
	}
	entries, err := fs.ReadDir(root.FS(), rel)
	if err != nil {
		if info, serr := root.Stat(rel); serr == nil && !info.IsDir() {
			return tools.ErrorResult(fmt.Sprintf("%s is a file, not a folder; use read_file", shown))
		}
		return tools.ErrorResult(friendly(shown, err))
	}
	var b strings.Builder
	n := 0
	for _, e := range entries {
		if t.j.denied(path.Join(rel, e.Name())) {
			continue
		}
		if n == maxListEntries {
			fmt.Fprintf(&b, "[more entries not shown; list a subfolder or use glob]\n")
			break
		}
		n++
		switch {
		case e.IsDir():
			fmt.Fprintf(&b, "%s/\n", e.Name())
		case e.Type()&fs.ModeSymlink != 0:
			fmt.Fprintf(&b, "%s@\n", e.Name())
		default:
			size := int64(0)
			if info, err := e.Info(); err == nil {
				size = info.Size()
			}
			fmt.Fprintf(&b, "%s  %d bytes\n", e.Name(), size)
		}
	}
	if n == 0 {
		return tools.Result{ForLLM: shown + " is empty"}
	}
	return tools.Result{ForLLM: b.String()}
}

// Glob is the glob tool: workspace paths matching a pattern (** crosses
// folders).
type Glob struct{ j *jail }

// Name implements Tool.
func (*Glob) Name() string { return "glob" }

// Description implements Tool.
func (*Glob) Description() string {
	return "Find files in this conversation's workspace whose path matches a glob pattern, e.g. **/*.go or docs/*.md " +
		"(** matches any number of folders)."
}

// Parameters implements Tool.
func (*Glob) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string"}},"required":["pattern"],"additionalProperties":false}`)
}

// SideEffect implements Tool.
func (*Glob) SideEffect() tools.SideEffect { return tools.SideEffectReadOnly }

// errEnough stops a walk that found enough.
var errEnough = errors.New("enough")

// Execute implements Tool.
func (t *Glob) Execute(ctx context.Context, raw json.RawMessage) tools.Result {
	var a struct {
		Pattern string `json:"pattern"`
	}
	if err := fsArgs(raw, &a, `{"pattern": "**/*.go"}`); err != nil {
		return tools.ErrorResult(err.Error())
	}
	pattern := strings.TrimPrefix(a.Pattern, "./")
	if pattern == "" || strings.HasPrefix(pattern, "/") || strings.Contains("/"+pattern+"/", "/../") || !doublestar.ValidatePattern(pattern) {
		return tools.ErrorResult(fmt.Sprintf("%q is not a usable pattern; use a relative glob like **/*.go", a.Pattern))
	}
	call, _ := tools.CallFrom(ctx)
	root, err := t.j.open(call)
	if err != nil {
		return tools.ErrorResult(err.Error())
	}
	defer root.Close()
	var matches []string
	more := false
	err = doublestar.GlobWalk(root.FS(), pattern, func(p string, d fs.DirEntry) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if t.j.denied(p) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if len(matches) == maxListEntries {
			more = true
			return errEnough
		}
		matches = append(matches, p)
		return nil
	}, doublestar.WithNoFollow(), doublestar.WithFilesOnly())
	if err != nil && !errors.Is(err, errEnough) {
		return tools.ErrorResult(fmt.Sprintf("glob %q: %v", a.Pattern, err))
	}
	if len(matches) == 0 {
		return tools.Result{ForLLM: "no files match " + a.Pattern}
	}
	sort.Strings(matches)
	out := strings.Join(matches, "\n")
	if more {
		out += fmt.Sprintf("\n[more than %d matches; narrow the pattern]", maxListEntries)
	}
	return tools.Result{ForLLM: out}
}
