package media_test

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/switchboard-chat/switchboard/bot/media"
)

func TestMediaSafeName(t *testing.T) {
	long := strings.Repeat("a", 300) + ".pdf"
	tests := map[string]string{
		"report.pdf":                    "report.pdf",
		"../../etc/passwd":              "passwd",
		`C:\Users\x\notes.txt`:          "notes.txt",
		"a\x00b.txt":                    "ab.txt",
		"bell\x07\x1b[31m.log":          "bell[31m.log",
		"evil\u202etxt.exe":             "eviltxt.exe",
		"":                              "file",
		".":                             "file",
		"..":                            "file",
		"dir/":                          "file",
		"  spaced  ":                    "spaced",
		"bad\xffutf8.txt":               "bad_utf8.txt",
		long:                            strings.Repeat("a", 96) + ".pdf",
		strings.Repeat("é", 80):         strings.Repeat("é", 50),
		"photo (1).jpg":                 "photo (1).jpg",
		"..hidden":                      "..hidden",
		strings.Repeat("x", 99):         strings.Repeat("x", 99),
		"a." + strings.Repeat("b", 200): "a." + strings.Repeat("b", 98),
	}
	for in, want := range tests {
		if got := media.SafeName(in); got != want {
			t.Errorf("SafeName(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzSafeName(f *testing.F) {
	for _, s := range []string{"report.pdf", "../../etc/passwd", `..\..\x`, "a\x00b", ".", "..", "", "é.txt", "/", "...", " .. "} {
		f.Add(s)
	}
	dir := filepath.Join(string(filepath.Separator)+"work", "chat", "inbox")
	f.Fuzz(func(t *testing.T, name string) {
		got := media.SafeName(name)
		if got == "" || got == "." || got == ".." {
			t.Fatalf("SafeName(%q) = %q", name, got)
		}
		if strings.ContainsAny(got, `/\`+"\x00") {
			t.Fatalf("SafeName(%q) = %q holds a separator or NUL", name, got)
		}
		if len(got) > 100 || !utf8.ValidString(got) {
			t.Fatalf("SafeName(%q) = %q: %d bytes, valid UTF-8 %v", name, got, len(got), utf8.ValidString(got))
		}
		joined := filepath.Join(dir, got)
		if rel, err := filepath.Rel(dir, joined); err != nil || rel != got || filepath.Dir(joined) != dir {
			t.Fatalf("SafeName(%q) = %q leaves %s: %s", name, got, dir, joined)
		}
	})
}
