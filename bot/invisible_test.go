package bot

import (
	"strings"
	"testing"
)

func TestShowInvisible(t *testing.T) {
	tests := []struct {
		in, want string
		hidden   bool
	}{
		{"ls -la\n\techo ok", "ls -la\n\techo ok", false},
		{"rm -rf ./build", "rm -rf ./build", false},
		{"échо ünïcode 日本", "échо ünïcode 日本", false}, // visible letters, even look-alike ones, stay
		{"echo safe\u202E fr- mr", "echo safe⟨U+202E⟩ fr- mr", true},
		{"r\u200bm -rf /", "r⟨U+200B⟩m -rf /", true},
		{"ls\u00a0-la", "ls⟨U+00A0⟩-la", true},
		{"a\u2066b\u2069c\u00adD\ufeff", "a⟨U+2066⟩b⟨U+2069⟩c⟨U+00AD⟩D⟨U+FEFF⟩", true},
		{"x\x1b[2Ky\u2028z", "x⟨U+001B⟩[2Ky⟨U+2028⟩z", true},
		{"tag\U000E0041s", "tag⟨U+E0041⟩s", true},
		{"v\ufe0fs", "v⟨U+FE0F⟩s", true},
	}
	for _, tt := range tests {
		got, hidden := ShowInvisible(tt.in)
		if got != tt.want || hidden != tt.hidden {
			t.Errorf("ShowInvisible(%q) = %q, %v; want %q, %v", tt.in, got, hidden, tt.want, tt.hidden)
		}
	}
	if b := CommandBlock("rm\u200b -rf"); !strings.Contains(b, "rm⟨U+200B⟩ -rf") || !strings.Contains(b, InvisibleWarning) {
		t.Errorf("CommandBlock = %q", b)
	}
	if b := CommandBlock("ls"); strings.Contains(b, InvisibleWarning) {
		t.Errorf("CommandBlock of a plain command warns: %q", b)
	}
}
