package markup

import (
	"strings"
	"testing"
)

// FuzzTelegramHTML checks TelegramHTML's promises on any input: every part
// within the limit, well-formed, using only our tags with everything else
// escaped, and no text lost by splitting.
func FuzzTelegramHTML(f *testing.F) {
	f.Add("**bold** *it* `code` [l](https://x.io) <b>raw</b> a & b", uint16(20))
	f.Add("```go\nfunc main() {\n\tprintln(\"<&>\")\n}\n```", uint16(40))
	f.Add("> quote **b** [l](https://x.io)\n> > nested", uint16(30))
	f.Add("- a\n  - b\n- [x] c\n\n| t | u |\n|---|---|\n| 1 | 2 |", uint16(16))
	f.Add(strings.Repeat("😀&", 30), uint16(17))
	f.Fuzz(func(t *testing.T, md string, l uint16) {
		limit := MinLimit + int(l)%5000
		parts := TelegramHTML(md, limit)
		for i, p := range parts {
			if err := checkPart(p, limit); err != nil {
				t.Fatalf("limit %d, part %d %q: %v", limit, i, p, err)
			}
		}
		whole := TelegramHTML(md, 1<<30)
		if len(whole) > 1 {
			t.Fatalf("unlimited render split into %d parts", len(whole))
		}
		if got, want := visibleText(parts), visibleText(whole); got != want {
			t.Fatalf("limit %d lost text:\n got %q\nwant %q", limit, got, want)
		}
		if PlainText(md) == "" && len(parts) > 0 && visibleText(parts) != "" {
			t.Fatalf("PlainText empty but HTML shows %q", visibleText(parts))
		}
	})
}
