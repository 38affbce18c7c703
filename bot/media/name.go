package media

import (
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxNameBytes bounds a safe name: well under every file system's 255-byte
// limit, with room for a " (12)" added on a clash.
const maxNameBytes = 100

// maxExtBytes is the longest suffix treated as an extension worth keeping
// when a name is shortened.
const maxExtBytes = 16

// SafeName turns a file name as sent, which is untrusted, into a base name
// that is safe to create in a directory: no '/' or '\', no NUL, control or
// invisible format characters, valid UTF-8, not ".", ".." or empty ("file"
// then), at most 100 bytes with its extension kept.
func SafeName(name string) string {
	name = strings.ToValidUTF8(name, "_")
	// Only the last component counts: a name such as "../../etc/passwd" or
	// "C:\x\y.txt" is the sender's path, not where the file goes.
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Map(func(r rune) rune {
		// Cf holds the bidi overrides that make "exe.txt" display as
		// "txt.exe"; Cc holds NUL and the terminal controls.
		if unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, name)
	name = strings.TrimSpace(name)
	name = shorten(name, maxNameBytes)
	if strings.Trim(name, ".") == "" {
		return "file"
	}
	return name
}

// shorten cuts name to at most limit bytes on a rune boundary, keeping a
// short extension.
func shorten(name string, limit int) string {
	if len(name) <= limit {
		return name
	}
	ext := filepath.Ext(name)
	if len(ext) > maxExtBytes || len(ext) == len(name) {
		ext = ""
	}
	stem := name[:len(name)-len(ext)]
	cut := limit - len(ext)
	for cut > 0 && !utf8.RuneStart(stem[cut]) {
		cut--
	}
	return strings.TrimSpace(stem[:cut]) + ext
}
