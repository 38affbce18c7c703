package fs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"

	"github.com/switchboard-chat/switchboard/tools"
)

// search limits.
const (
	maxSearchMatches  = 200
	maxSearchFile     = 2 << 20  // larger files are skipped
	maxSearchScanned  = 64 << 20 // bytes read in one search at most
	maxSearchLineShow = 300
)

// Search is the search tool: lines of workspace files matching a regular
// expression (RE2 syntax: linear time, no catastrophic backtracking).
type Search struct{ j *jail }

// Name implements Tool.
func (*Search) Name() string { return "search" }

// Description implements Tool.
func (*Search) Description() string {
	return "Search the text files of this conversation's workspace (or one folder or file of it) for lines matching " +
		"a regular expression (RE2 syntax). Returns path:line: text."
}

// Parameters implements Tool.
func (*Search) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"pattern":{"type":"string","description":"Regular expression (RE2)."},` +
		`"path":{"type":"string","description":"Folder or file to search; default the workspace."}},` +
		`"required":["pattern"],"additionalProperties":false}`)
}

// SideEffect implements Tool.
func (*Search) SideEffect() tools.SideEffect { return tools.SideEffectReadOnly }

// Execute implements Tool.
func (t *Search) Execute(ctx context.Context, raw json.RawMessage) tools.Result {
	var a struct {
		Pattern string `json:"pattern"`
		Path    string `json:"path"`
	}
	if err := fsArgs(raw, &a, `{"pattern": "regexp", "path"?: "folder"}`); err != nil {
		return tools.ErrorResult(err.Error())
	}
	if a.Pattern == "" {
		return tools.ErrorResult(`missing "pattern"`)
	}
	re, err := regexp.Compile(a.Pattern)
	if err != nil {
		return tools.ErrorResult(fmt.Sprintf("pattern is not a valid regular expression (RE2): %v", err))
	}
	call, _ := tools.CallFrom(ctx)
	root, rel, err := t.j.openPath(call, a.Path)
	if err != nil {
		return tools.ErrorResult(err.Error())
	}
	defer root.Close()
	var b strings.Builder
	matches, scanned := 0, 0
	stopped := ""
	err = fs.WalkDir(root.FS(), rel, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == rel {
				return err
			}
			return nil // an unreadable entry is skipped
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if t.j.denied(p) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		data, _, err := readLimited(root, p, maxSearchFile)
		if err != nil || isBinary(data) {
			return nil
		}
		scanned += len(data)
		for i, line := range strings.Split(string(data), "\n") {
			if !re.MatchString(line) {
				continue
			}
			if matches == maxSearchMatches {
				stopped = fmt.Sprintf("[stopped at %d matches; narrow the pattern or the path]", maxSearchMatches)
				return errEnough
			}
			matches++
			if len(line) > maxSearchLineShow {
				line = line[:maxSearchLineShow] + "…"
			}
			fmt.Fprintf(&b, "%s:%d: %s\n", p, i+1, line)
		}
		if scanned > maxSearchScanned {
			stopped = "[stopped after reading 64 MiB; narrow the path]"
			return errEnough
		}
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return tools.ErrorResult(friendly(a.Path, err))
	}
	if matches == 0 && stopped == "" {
		return tools.Result{ForLLM: "no matches for " + a.Pattern}
	}
	return tools.Result{ForLLM: b.String() + stopped}
}
