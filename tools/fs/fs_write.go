package fs

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/switchboard-chat/switchboard/tools"
)

// WriteFile is the write_file tool: create or replace a file in the
// workspace (parent folders are created).
type WriteFile struct{ j *jail }

// Name implements Tool.
func (*WriteFile) Name() string { return "write_file" }

// Description implements Tool.
func (*WriteFile) Description() string {
	return "Create or overwrite a text file in this conversation's workspace with the given content; missing folders are created."
}

// Parameters implements Tool.
func (*WriteFile) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"path":{"type":"string","description":"File path relative to the workspace."},` +
		`"content":{"type":"string","description":"The whole new content."}},` +
		`"required":["path","content"],"additionalProperties":false}`)
}

// SideEffect implements Tool.
func (*WriteFile) SideEffect() tools.SideEffect { return tools.SideEffectMutating }

// Execute implements Tool.
func (t *WriteFile) Execute(ctx context.Context, raw json.RawMessage) tools.Result {
	var a struct {
		Path    string  `json:"path"`
		Content *string `json:"content"`
	}
	if err := fsArgs(raw, &a, `{"path": "...", "content": "..."}`); err != nil {
		return tools.ErrorResult(err.Error())
	}
	if a.Path == "" || a.Content == nil {
		return tools.ErrorResult(`pass "path" and "content"`)
	}
	if len(*a.Content) > maxWriteBytes {
		return tools.ErrorResult(fmt.Sprintf("content is %d bytes; write_file takes at most %d", len(*a.Content), maxWriteBytes))
	}
	call, _ := tools.CallFrom(ctx)
	if key, _, ok := t.j.docRoute(call, a.Path); ok {
		note, err := t.j.putDoc(ctx, key, *a.Content)
		if err != nil {
			return tools.ErrorResult(err.Error())
		}
		if *a.Content == "" {
			return tools.Result{ForLLM: "deleted " + key.Path}
		}
		return tools.Result{ForLLM: fmt.Sprintf("saved %s (%d bytes)%s", key.Path, len(*a.Content), note)}
	}
	root, rel, err := t.j.writablePath(call, a.Path)
	if err != nil {
		return tools.ErrorResult(err.Error())
	}
	defer root.Close()
	if rel == "." {
		return tools.ErrorResult(`"path" must name a file, not the workspace`)
	}
	if dir := path.Dir(rel); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return tools.ErrorResult(friendly(a.Path, err))
		}
	}
	if info, err := root.Lstat(rel); err == nil && info.IsDir() {
		return tools.ErrorResult(fmt.Sprintf("%s is a directory", a.Path))
	}
	if err := root.WriteFile(rel, []byte(*a.Content), 0o644); err != nil {
		return tools.ErrorResult(friendly(a.Path, err))
	}
	t.j.chown(root, rel)
	return tools.Result{ForLLM: fmt.Sprintf("wrote %d bytes to %s", len(*a.Content), rel)}
}

// Edit is the edit tool: replace one exact piece of text in a file.
type Edit struct{ j *jail }

// Name implements Tool.
func (*Edit) Name() string { return "edit" }

// Description implements Tool.
func (*Edit) Description() string {
	return "Replace old_text with new_text in a workspace file. old_text must match exactly (whitespace included) " +
		"and be unique in the file, unless replace_all is true. Read the file first to copy the exact text."
}

// Parameters implements Tool.
func (*Edit) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"path":{"type":"string"},"old_text":{"type":"string"},"new_text":{"type":"string"},` +
		`"replace_all":{"type":"boolean"}},"required":["path","old_text","new_text"],"additionalProperties":false}`)
}

// SideEffect implements Tool.
func (*Edit) SideEffect() tools.SideEffect { return tools.SideEffectMutating }

// Execute implements Tool.
func (t *Edit) Execute(ctx context.Context, raw json.RawMessage) tools.Result {
	var a struct {
		Path       string  `json:"path"`
		OldText    string  `json:"old_text"`
		NewText    *string `json:"new_text"`
		ReplaceAll bool    `json:"replace_all"`
	}
	if err := fsArgs(raw, &a, `{"path": "...", "old_text": "...", "new_text": "...", "replace_all"?: false}`); err != nil {
		return tools.ErrorResult(err.Error())
	}
	if a.Path == "" || a.NewText == nil {
		return tools.ErrorResult(`pass "path", "old_text" and "new_text"`)
	}
	if a.OldText == "" {
		return tools.ErrorResult(`"old_text" is empty; pass the exact text to replace (use write_file to create a file)`)
	}
	call, _ := tools.CallFrom(ctx)
	if key, read, ok := t.j.docRoute(call, a.Path); ok {
		text, err := t.j.docText(ctx, key, read)
		if err != nil {
			return tools.ErrorResult(err.Error())
		}
		out, msg, res := replaceText(key.Path, text, a.OldText, *a.NewText, a.ReplaceAll)
		if res != nil {
			return *res
		}
		note, err := t.j.putDoc(ctx, key, out)
		if err != nil {
			return tools.ErrorResult(err.Error())
		}
		return tools.Result{ForLLM: msg + note}
	}
	root, rel, err := t.j.writablePath(call, a.Path)
	if err != nil {
		return tools.ErrorResult(err.Error())
	}
	defer root.Close()
	text, info, err := readText(root, rel, a.Path, maxWriteBytes)
	if err != nil {
		return tools.ErrorResult(err.Error())
	}
	out, msg, res := replaceText(rel, text, a.OldText, *a.NewText, a.ReplaceAll)
	if res != nil {
		return *res
	}
	if err := root.WriteFile(rel, []byte(out), info.Mode().Perm()); err != nil {
		return tools.ErrorResult(friendly(a.Path, err))
	}
	return tools.Result{ForLLM: msg}
}

// replaceText replaces oldText in the text of file name: once (it must be
// unique) or everywhere. A non-nil res is the error to return instead.
func replaceText(name, text, oldText, newText string, all bool) (out, msg string, res *tools.Result) {
	n := strings.Count(text, oldText)
	switch {
	case n == 0:
		r := tools.ErrorResult(fmt.Sprintf("old_text was not found in %s; read the file and copy the exact text, whitespace included", name))
		return "", "", &r
	case n > 1 && !all:
		r := tools.ErrorResult(fmt.Sprintf("old_text matches %d places in %s; include more surrounding lines to make it unique, or set replace_all", n, name))
		return "", "", &r
	}
	out, replaced := strings.Replace(text, oldText, newText, 1), 1
	if all {
		out, replaced = strings.ReplaceAll(text, oldText, newText), n
	}
	if len(out) > maxWriteBytes {
		r := tools.ErrorResult(fmt.Sprintf("the edited file would be %d bytes; the limit is %d", len(out), maxWriteBytes))
		return "", "", &r
	}
	return out, fmt.Sprintf("replaced %d occurrence(s) in %s", replaced, name), nil
}
