package markup

import (
	"strings"
	"testing"
)

func TestTerminalWithoutColor(t *testing.T) {
	tests := []struct {
		name, md, want string
	}{
		{"styles dropped", "**b** *i* ~~s~~ `c`", "b i s c"},
		{"heading", "# Title\n\ntext", "Title\n\ntext"},
		{"lists", "- a\n- b\n\n1. c\n2. d", "• a\n• b\n\n1. c\n2. d"},
		{"link with label", "see [docs](https://d.io)", "see docs (https://d.io)"},
		{"bare link", "<https://d.io>", "https://d.io"},
		{"unsafe link keeps its label", "[x](javascript:alert(1))", "x"},
		{"code block indented", "run:\n\n```sh\nls -l\npwd\n```\n\ndone", "run:\n\n    ls -l\n    pwd\n\ndone"},
		{"quote marked per line", "> one\n> two", "│ one\n│ two"},
		{"table", "| a | b |\n|---|---|\n| 1 | 2 |", "a | b\n1 | 2"},
		{"escape sequences neutralised", "hi \x1b]0;pwned\x07 \x1b[2J", "hi \uFFFD]0;pwned\uFFFD \uFFFD[2J"},
		{"escape sequence in code", "`\x1b[31m`", "\uFFFD[31m"},
		{"empty", " \n ", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Terminal(tt.md, false); got != tt.want {
				t.Errorf("Terminal(%q, false) = %q, want %q", tt.md, got, tt.want)
			}
		})
	}
}

func TestTerminalWithColor(t *testing.T) {
	tests := []struct {
		name, md, want string
	}{
		{"bold", "**b**", "\x1b[1mb\x1b[22m"},
		{"italic and strike", "*i* ~~s~~", "\x1b[3mi\x1b[23m \x1b[9ms\x1b[29m"},
		{"heading is bold", "## H", "\x1b[1mH\x1b[22m"},
		{"code", "`x`", "\x1b[36mx\x1b[39m"},
		{"code block", "```\na\nb\n```", "    \x1b[36ma\n    b\x1b[39m"},
		{"link underlined, url after", "[d](https://d.io)", "\x1b[4md\x1b[24m (https://d.io)"},
		{"model's escapes still neutralised", "**\x1b[5mx**", "\x1b[1m\uFFFD[5mx\x1b[22m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Terminal(tt.md, true); got != tt.want {
				t.Errorf("Terminal(%q, true) = %q, want %q", tt.md, got, tt.want)
			}
		})
	}
}

// FuzzTerminal checks that no input reaches the terminal as a control
// sequence: without color the output has no control characters but
// newline and tab, and with color every ESC starts one of our own SGR
// sequences.
func FuzzTerminal(f *testing.F) {
	f.Add("**b** *i* `c` [l](https://x.io)\n\n```\n\x1b[2J\n```\n> q\x07")
	f.Add("\x1b]0;title\x07 \u009b31m \x7f")
	f.Fuzz(func(t *testing.T, md string) {
		plain := Terminal(md, false)
		if strings.IndexFunc(plain, isTerminalControl) >= 0 {
			t.Fatalf("control character in %q", plain)
		}
		colored := Terminal(md, true)
		for _, sgr := range terminalSGR {
			colored = strings.ReplaceAll(strings.ReplaceAll(colored, sgr[0], ""), sgr[1], "")
		}
		if strings.IndexFunc(colored, isTerminalControl) >= 0 {
			t.Fatalf("control character beyond our styles in %q", Terminal(md, true))
		}
	})
}
