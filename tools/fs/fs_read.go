package fs

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/switchboard-chat/switchboard/tools"
)

// ReadFile is the read_file tool: a text file of the workspace, whole or a
// range of lines.
type ReadFile struct{ j *jail }

// Name implements Tool.
func (*ReadFile) Name() string { return "read_file" }

// Description implements Tool.
func (*ReadFile) Description() string {
	return "Read a text file in this conversation's workspace. Optional start_line and end_line (1-based, inclusive) " +
		"read part of a long file."
}

// Parameters implements Tool.
func (*ReadFile) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"path":{"type":"string","description":"File path relative to the workspace."},` +
		`"start_line":{"type":"integer","minimum":1},"end_line":{"type":"integer","minimum":1}},` +
		`"required":["path"],"additionalProperties":false}`)
}

// SideEffect implements Tool.
func (*ReadFile) SideEffect() tools.SideEffect { return tools.SideEffectReadOnly }

// Execute implements Tool.
func (t *ReadFile) Execute(ctx context.Context, raw json.RawMessage) tools.Result {
	var a struct {
		Path      string `json:"path"`
		StartLine int    `json:"start_line"`
		EndLine   int    `json:"end_line"`
	}
	if err := fsArgs(raw, &a, `{"path": "...", "start_line"?: N, "end_line"?: N}`); err != nil {
		return tools.ErrorResult(err.Error())
	}
	if a.Path == "" {
		return tools.ErrorResult(`missing "path": pass the file to read`)
	}
	if a.StartLine < 0 || a.EndLine < 0 || (a.EndLine > 0 && a.EndLine < a.StartLine) {
		return tools.ErrorResult("start_line and end_line must be positive, and end_line not before start_line")
	}
	call, _ := tools.CallFrom(ctx)
	if key, read, ok := t.j.docRoute(call, a.Path); ok {
		text, err := t.j.docText(ctx, key, read)
		if err != nil {
			return tools.ErrorResult(err.Error())
		}
		return LineRange(a.Path, text, a.StartLine, a.EndLine)
	}
	root, rel, err := t.j.openPath(call, a.Path)
	if err != nil {
		return tools.ErrorResult(err.Error())
	}
	defer root.Close()
	text, _, err := readText(root, rel, a.Path, maxReadBytes)
	if err != nil {
		return tools.ErrorResult(err.Error())
	}
	return LineRange(a.Path, text, a.StartLine, a.EndLine)
}

// LineRange returns lines start..end (1-based, inclusive; 0 means the
// whole text) of the text of file name, cut to maxShownBytes: read_file
// and memory_get show text the same way.
func LineRange(name, text string, start, end int) tools.Result {
	if start > 0 || end > 0 {
		lines := strings.SplitAfter(text, "\n")
		if len(lines) > 0 && lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		start = max(start, 1)
		if end == 0 || end > len(lines) {
			end = len(lines)
		}
		if start > len(lines) {
			return tools.ErrorResult(fmt.Sprintf("%s has %d lines; start_line %d is past the end", name, len(lines), start))
		}
		text = strings.Join(lines[start-1:end], "")
	}
	if len(text) > maxShownBytes {
		cut := maxShownBytes
		for cut > 0 && !isRuneStart(text[cut]) {
			cut--
		}
		text = text[:cut] + fmt.Sprintf("\n[truncated: %d of %d bytes shown; read the rest with start_line/end_line]", cut, len(text))
	}
	return tools.Result{ForLLM: text}
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
