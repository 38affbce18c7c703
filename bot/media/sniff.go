package media

import (
	"mime"
	"net/http"
	"path/filepath"
	"strings"
)

// sniffBytes is how much of a file Sniff looks at (http.DetectContentType
// reads no more).
const sniffBytes = 512

// textByExtension refines a sniffed text/plain: the bytes say "text", the
// extension says which text.
var textByExtension = map[string]string{
	".md":       "text/markdown",
	".markdown": "text/markdown",
	".csv":      "text/csv",
	".json":     "application/json",
}

// Sniff returns the MIME type of a file from its first bytes, without
// parameters ("text/plain", "image/png"). The name only refines a text
// type (notes.md is text/markdown); it never makes bytes something else,
// so a "photo.png" that is a shell script is text/plain.
func Sniff(head []byte, safeName string) string {
	typ := http.DetectContentType(head)
	if t, _, err := mime.ParseMediaType(typ); err == nil {
		typ = t
	}
	if typ == "text/plain" {
		if refined, ok := textByExtension[strings.ToLower(filepath.Ext(safeName))]; ok {
			return refined
		}
	}
	return typ
}
