package slack

import (
	"fmt"
	"strings"
	"testing"
)

func TestStreamableHoldsBackOnlyAClosingFence(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain text", "plain text"},
		{"```go\nx := 1\n```", "```go\nx := 1\n"},
		{"```go\nx := 1\n```\n\n", "```go\nx := 1\n"},
		{"intro\n~~~~\ncode\n~~~~  ", "intro\n~~~~\ncode\n"},
		{"```go\nx := 1", "```go\nx := 1"},                     // open: nothing to hold
		{"```\na\n```\ntext after", "```\na\n```\ntext after"}, // closed earlier
		{"```\na\n```\n```", "```\na\n```\n```"},               // a fence opening a new block
		{"````\n```\n````", "````\n```\n"},                     // a shorter run does not close
		{"    ```\nindented code is no fence", "    ```\nindented code is no fence"},
	} {
		if got := streamable(c.in); got != c.want {
			t.Errorf("streamable(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// Each text held back this way extends the one before, as the daemon
	// grows a code block and closes it anew each time.
	prev, text := "", "Look:\n\n```go\n"
	for i := range 20 {
		text += fmt.Sprintf("line %d\n", i)
		shown := streamable(text + "```")
		if !strings.HasPrefix(shown, prev) {
			t.Fatalf("step %d: %q does not extend %q", i, shown, prev)
		}
		prev = shown
	}
}

func TestBoundedForgetsOldest(t *testing.T) {
	b := newBounded[int](3)
	for i := range 10 {
		b.Add(fmt.Sprint(i), i)
		if i%2 == 0 {
			b.Remove(fmt.Sprint(i))
		}
	}
	if b.Len() > 3 {
		t.Fatalf("holds %d entries", b.Len())
	}
	if _, ok := b.Get("9"); !ok {
		t.Error("newest entry forgotten")
	}
	if _, ok := b.Get("1"); ok {
		t.Error("oldest entry kept beyond the bound")
	}
}
