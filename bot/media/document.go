package media

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// DocumentLimit is how many characters of a document the model reads at
// once: inline with the message that brought it, and per read_document
// call.
const DocumentLimit = 20_000

// Window is the part of a document to read.
type Window struct {
	// FirstPage and LastPage (1-based, inclusive; 0 for the first page and
	// for the end) choose the pages of a PDF.
	FirstPage, LastPage int
	// Offset is how many characters of the window's text to skip: for a
	// PDF counted from FirstPage's page marker.
	Offset int
	// Limit is the most characters returned; 0 means DocumentLimit.
	Limit int
}

// Excerpt is the part of a document's text a Window chose.
type Excerpt struct {
	// Text is the text, as UTF-8: invalid bytes are replaced by U+FFFD. A
	// PDF's pages each start with a "[page N]" line.
	Text string
	// More reports whether the document goes on past Text.
	More bool
	// NextPage and NextOffset are the Window that reads on from where Text
	// stops: NextPage is 0 for a document without pages.
	NextPage, NextOffset int
}

// ErrNotDocument is returned for a file ReadDocument does not read as text
// (an image, audio, an archive).
var ErrNotDocument = errors.New("not a document")

// IsDocument reports whether files of MIME type typ are read as text: PDF,
// and text of any kind (plain, Markdown, CSV, HTML, source code) or JSON.
func IsDocument(typ string) bool {
	return typ == "application/pdf" || isText(typ)
}

// isText reports whether typ is read as it is, as UTF-8 text.
func isText(typ string) bool {
	return strings.HasPrefix(typ, "text/") || typ == "application/json"
}

// ReadDocument returns the text of document f, of MIME type typ (Sniff),
// within w. A PDF is read by poppler's pdftotext, with a time limit; other
// documents are read as text. Only as much is read as w needs, so a huge
// or endless file costs no more than its window.
func ReadDocument(ctx context.Context, f *os.File, typ string, w Window) (Excerpt, error) {
	if w.Limit <= 0 {
		w.Limit = DocumentLimit
	}
	if w.Offset < 0 || w.FirstPage < 0 || w.LastPage < 0 || (w.LastPage > 0 && w.LastPage < max(w.FirstPage, 1)) {
		return Excerpt{}, fmt.Errorf("media: window %+v: pages and offset must be positive, the last page not before the first", w)
	}
	switch {
	case typ == "application/pdf":
		return pdfText(ctx, f, w)
	case isText(typ):
		if w.FirstPage > 0 || w.LastPage > 0 {
			return Excerpt{}, errors.New("pages are for PDFs; read on in a text file with offset")
		}
		if _, err := f.Seek(0, 0); err != nil {
			return Excerpt{}, fmt.Errorf("media: read document: %w", err)
		}
		return cut(f, w.Offset, w.Limit, 0)
	}
	return Excerpt{}, fmt.Errorf("%w: a %s file is not read as text", ErrNotDocument, typ)
}

// DocumentText returns the first DocumentLimit characters of the document
// at workspace path rel in the workspace dir, of MIME type typ, and where
// it goes on (read_document reads the rest): what the message that brought
// the document shows of it. The file is opened through an os.Root of dir,
// so rel cannot lead out of the workspace.
func DocumentText(ctx context.Context, dir, rel, typ string) (Excerpt, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return Excerpt{}, fmt.Errorf("media: workspace: %w", err)
	}
	defer root.Close()
	// Non-blocking, so a FIFO put in its place cannot hang the message.
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return Excerpt{}, fmt.Errorf("media: open %s: %w", rel, err)
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return Excerpt{}, fmt.Errorf("media: %s is not a regular file", rel)
	}
	return ReadDocument(ctx, f, typ, Window{})
}

// ReadOn is the line that tells the model how to read on past ex, a part
// of the document at workspace path rel; "" when ex is the end.
func ReadOn(rel string, ex Excerpt) string {
	if !ex.More {
		return ""
	}
	next := map[string]any{"path": rel, "offset": ex.NextOffset}
	if ex.NextPage > 0 {
		next["pages"] = fmt.Sprintf("%d-", ex.NextPage)
	}
	args, _ := json.Marshal(next)
	return fmt.Sprintf("[more: read on with read_document %s]", args)
}
