package console_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/console"
)

// TestTypingShowsWorkingOnce: while the agent works the terminal shows one
// "… working" line, however often Typing is called; the reply follows.
func TestTypingShowsWorkingOnce(t *testing.T) {
	var out bytes.Buffer
	c := console.New(console.Options{In: strings.NewReader(""), Out: &out})
	ctx := context.Background()
	for range 3 {
		if err := c.Typing(ctx, console.Address()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Send(ctx, channels.Outbound{To: console.Address(), Text: "the answer"}); err != nil {
		t.Fatal(err)
	}
	_ = c.Typing(ctx, console.Address()) // the next run shows it again
	got := out.String()
	if n := strings.Count(got, "… working"); n != 2 {
		t.Fatalf("%d working lines, want one per run:\n%s", n, got)
	}
	if i, j := strings.Index(got, "… working"), strings.Index(got, "the answer"); i < 0 || j < i {
		t.Fatalf("the reply must follow the working line:\n%s", got)
	}
}
