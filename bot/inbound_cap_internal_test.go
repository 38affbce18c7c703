package bot

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCapInbound: text is cut on a character boundary to its platform's
// limit (Telegram's own 4 096, 40 000 elsewhere) with a marker counting
// what was cut; text that fits is left alone.
func TestCapInbound(t *testing.T) {
	tests := []struct {
		name, platform, text string
		kept, cut            int
	}{
		{"fits on telegram", "telegram", strings.Repeat("a", 4096), 4096, 0},
		{"telegram, emoji", "telegram", strings.Repeat("🙂", 5000), 4096, 904},
		{"slack", "slack", strings.Repeat("ж", 40_001), 40_000, 1},
		{"console, 10 MB", "console", strings.Repeat("x", 10_000_000), 40_000, 9_960_000},
		{"fits in bytes", "discord", "short", 5, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, cut := capInbound(tt.text, inboundLimit(tt.platform))
			if cut != tt.cut || !utf8.ValidString(got) {
				t.Fatalf("cut %d (valid UTF-8: %v), want %d", cut, utf8.ValidString(got), tt.cut)
			}
			kept, marker, _ := strings.Cut(got, "\n[… message cut: ")
			if n := utf8.RuneCountInString(kept); n != tt.kept || !strings.HasPrefix(tt.text, kept) {
				t.Fatalf("kept %d characters, want the first %d", n, tt.kept)
			}
			if want := spacedDigits(tt.cut) + " more characters not read]"; tt.cut > 0 && marker != want {
				t.Fatalf("marker = %q, want %q", marker, want)
			}
		})
	}
	if got := spacedDigits(9_987_654); got != "9 987 654" {
		t.Fatalf("spacedDigits = %q", got)
	}
}
