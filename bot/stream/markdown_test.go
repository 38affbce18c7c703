package stream

import (
	"strings"
	"testing"
)

func TestBalancedClosesAnOpenFence(t *testing.T) {
	cases := map[string]string{
		"plain":                    "plain",
		"```go\nfmt.Println(":      "```go\nfmt.Println(\n```",
		"```\na\n```\ntext":        "```\na\n```\ntext",
		"x\n```\na\n```\n```\nb\n": "x\n```\na\n```\n```\nb\n\n```",
	}
	for in, want := range cases {
		if got := balanced(in); got != want {
			t.Errorf("balanced(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestChunksKeepEveryRuneAndFitTheLimit(t *testing.T) {
	text := strings.Repeat("héllo wörld ", 50) + "\n```\n" + strings.Repeat("code\n", 40) + "```\nbye"
	const limit = 64
	got := chunks(text, limit)
	var plain strings.Builder
	for i, c := range got {
		if n := len([]rune(c)); n > limit {
			t.Fatalf("chunk %d has %d runes > %d", i, n, limit)
		}
		if openFence(c, false) {
			t.Fatalf("chunk %d leaves a fence open: %q", i, c)
		}
		c = strings.TrimPrefix(c, "```\n")
		c = strings.TrimSuffix(c, "\n```")
		plain.WriteString(c)
	}
	strip := func(s string) string { return strings.NewReplacer("```", "", "\n", "").Replace(s) }
	if strip(plain.String()) != strip(text) {
		t.Fatalf("chunks lost or doubled text")
	}
}
