package markup

import "testing"

func TestPlainText(t *testing.T) {
	tests := []struct {
		name, md, want string
	}{
		{"styles dropped", "**b** *i* ~~s~~ `c`", "b i s c"},
		{"link with label", "[docs](https://d.io)", "docs (https://d.io)"},
		{"bare link", "<https://d.io>", "https://d.io"},
		{"email", "<a@b.io>", "a@b.io"},
		{"bad link keeps label", "[x](javascript:y)", "x"},
		{"heading and list", "# T\n\n- a\n- b\n\n1. c", "T\n\n• a\n• b\n\n1. c"},
		{"code block", "```go\nx := 1 < 2\n```", "x := 1 < 2"},
		{"quote", "> q [l](https://l.io)", "q l (https://l.io)"},
		{"raw html kept as text", "<b>x</b> & y", "<b>x</b> & y"},
		{"table", "| a | b |\n|---|---|\n| 1 | 2 |", "a | b\n1 | 2"},
		{"entities resolved", "&lt;tag&gt; &amp;", "<tag> &"},
		{"empty", " \n ", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PlainText(tt.md); got != tt.want {
				t.Errorf("PlainText(%q) = %q, want %q", tt.md, got, tt.want)
			}
		})
	}
}

// TestTableCellsAsText checks what a reader sees of a table's cells.
func TestTableCellsAsText(t *testing.T) {
	for _, c := range []struct{ md, want string }{
		{"| left | right |\n|:--|--:|\n| `x \\| y` | a \\| b |", "left | right\nx | y | a | b"},
		{"| a | b |\n|---|---|\n| 1 | 2 | 3 |\n| 4 |", "a | b\n1 | 2\n4 |"},
		{"- [x] done\n- [ ] open", "• ☑ done\n• ☐ open"},
	} {
		if got := PlainText(c.md); got != c.want {
			t.Errorf("PlainText(%q) = %q, want %q", c.md, got, c.want)
		}
	}
}
