package media

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/switchboard-chat/switchboard/tools"
)

// ReadDocumentTool is the read_document tool: the text of a PDF, text,
// Markdown, CSV, JSON or source file of the workspace, DocumentLimit
// characters at a time.
type ReadDocumentTool struct{ t *mediaTools }

// Name implements tools.Tool.
func (*ReadDocumentTool) Name() string { return "read_document" }

// Description implements tools.Tool.
func (*ReadDocumentTool) Description() string {
	return fmt.Sprintf("Read the text of a document in this conversation's workspace (PDF, text, Markdown, CSV, JSON, "+
		"source code; a file someone sent is at inbox/<name>), %d characters at a time. For a PDF, pages chooses "+
		`pages ("3", "2-5" or "4-" for page 4 to the end). offset skips that many characters, to read on where `+
		"the last call stopped: each answer that stops early says which pages and offset to pass next.", DocumentLimit)
}

// Parameters implements tools.Tool.
func (*ReadDocumentTool) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"path":{"type":"string","description":"Document path relative to the workspace, e.g. inbox/report.pdf."},` +
		`"pages":{"type":"string","description":"PDF only: \"3\", \"2-5\" or \"4-\"."},` +
		`"offset":{"type":"integer","minimum":0,"description":"Characters to skip (of the pages chosen, for a PDF)."}},` +
		`"required":["path"],"additionalProperties":false}`)
}

// SideEffect implements tools.Tool.
func (*ReadDocumentTool) SideEffect() tools.SideEffect { return tools.SideEffectReadOnly }

// Execute implements tools.Tool.
func (r *ReadDocumentTool) Execute(ctx context.Context, raw json.RawMessage) tools.Result {
	var a struct {
		Path   string `json:"path"`
		Pages  string `json:"pages"`
		Offset int    `json:"offset"`
	}
	if err := decodeArgs(raw, &a, `{"path": "inbox/report.pdf", "pages"?: "2-5", "offset"?: N}`); err != nil {
		return tools.ErrorResult(err.Error())
	}
	first, last, err := parsePages(a.Pages)
	if err != nil {
		return tools.ErrorResult(err.Error())
	}
	if a.Offset < 0 {
		return tools.ErrorResult("offset must be 0 or more")
	}
	f, err := r.t.open(ctx, a.Path)
	if err != nil {
		return tools.ErrorResult(err.Error())
	}
	defer f.Close()
	ex, err := ReadDocument(ctx, f.File, f.typ, Window{FirstPage: first, LastPage: last, Offset: a.Offset})
	switch {
	case errors.Is(err, ErrNotDocument) && strings.HasPrefix(f.typ, "image/"):
		return tools.ErrorResult(f.describe() + " is an image; read it with read_image")
	case errors.Is(err, ErrNotDocument) && isSound(f.typ):
		return tools.ErrorResult(f.describe() + " is audio or video; read it with read_audio or read_video")
	case errors.Is(err, ErrNotDocument):
		return tools.ErrorResult(f.describe() + " is not a document read as text; exec can unpack or convert it")
	case err != nil:
		return tools.ErrorResult(fmt.Sprintf("%s: %v", f.describe(), err))
	}
	return tools.Result{ForLLM: documentResult(f, ex)}
}

// documentResult is read_document's answer: the file, its text, and how
// to read on.
func documentResult(f *workspaceFile, ex Excerpt) string {
	var b strings.Builder
	b.WriteString(f.describe())
	b.WriteString(":\n")
	if strings.TrimSpace(ex.Text) == "" {
		b.WriteString("(no text here: a PDF of scanned pages has none; read_image reads a picture of a page)")
	}
	b.WriteString(ex.Text)
	if more := ReadOn(f.path, ex); more != "" {
		b.WriteString("\n" + more)
	}
	return b.String()
}

// parsePages reads a pages argument: "" (all), "3", "2-5" or "4-".
func parsePages(s string) (first, last int, err error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, 0, nil
	}
	bad := fmt.Errorf(`pages %q: pass one page ("3"), a range ("2-5") or a page to the end ("4-")`, s)
	from, to, isRange := strings.Cut(s, "-")
	first, err = strconv.Atoi(strings.TrimSpace(from))
	if err != nil || first < 1 {
		return 0, 0, bad
	}
	switch {
	case !isRange:
		return first, first, nil
	case strings.TrimSpace(to) == "":
		return first, 0, nil
	}
	last, err = strconv.Atoi(strings.TrimSpace(to))
	if err != nil || last < first {
		return 0, 0, bad
	}
	return first, last, nil
}
