package console_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
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

// TestRepliesRenderMarkdownForTheTerminal: no raw Markdown marks reach the
// operator; code blocks are indented, links show their address.
func TestRepliesRenderMarkdownForTheTerminal(t *testing.T) {
	var out bytes.Buffer
	c := console.New(console.Options{In: strings.NewReader(""), Out: &out})
	md := "## Result\n\n**done**, see [the docs](https://d.io):\n\n```sh\nls -l\n```\n\n- `a`\n- *b*"
	if _, err := c.Send(context.Background(), channels.Outbound{To: console.Address(), Text: md}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	want := "Result\n\ndone, see the docs (https://d.io):\n\n    ls -l\n\n• a\n• b\n"
	if !strings.Contains(got, want) {
		t.Fatalf("reply printed as\n%q\nwant it to contain\n%q", got, want)
	}
	if strings.ContainsAny(got, "*`#\x1b") {
		t.Fatalf("raw Markdown or ANSI sequences without Color:\n%s", got)
	}
}

// TestLogLinesNeverShareALine: a log line written while the prompt or the
// working note is on screen starts on a line of its own, and the prompt
// comes back after it.
func TestLogLinesNeverShareALine(t *testing.T) {
	var term channeltest.Log // stdout and stderr of one terminal
	c := console.New(console.Options{In: strings.NewReader(""), Out: &term})
	logs := c.LogWriter(&term)
	ctx := context.Background()
	if _, err := c.Send(ctx, channels.Outbound{To: console.Address(), Text: "hello"}); err != nil {
		t.Fatal(err)
	}
	_, _ = io.WriteString(logs, "time=1 level=WARN msg=one\n")
	_ = c.Typing(ctx, console.Address())
	_, _ = io.WriteString(logs, "time=2 level=WARN msg=two\n")
	got := term.String()
	for line := range strings.Lines(got) {
		if strings.Contains(line, "level=") && !strings.HasPrefix(line, "time=") {
			t.Fatalf("a log line shares its line with the conversation: %q\nin\n%s", line, got)
		}
		if strings.Contains(line, "working") && strings.Contains(line, "level=") {
			t.Fatalf("the working note shares a line with a log line: %q", line)
		}
	}
	if !strings.Contains(got, "msg=one\n> ") {
		t.Fatalf("the prompt is not shown again after the log line:\n%q", got)
	}
}

// approvalButtons are the buttons bot sends with an approval request.
var approvalButtons = [][]channels.Button{{
	{Label: "Allow once", Data: "ap:aaaaaaaaaaaaaaaaaaaa:o"},
	{Label: "Always allow", Data: "ap:aaaaaaaaaaaaaaaaaaaa:a"},
	{Label: "Deny", Data: "ap:aaaaaaaaaaaaaaaaaaaa:d"},
}}

// accessButtons are the buttons of an access request.
var accessButtons = [][]channels.Button{{
	{Label: "Approve", Data: "ar:bbbbbbbbbbbbbbbbbbbb:y"},
	{Label: "Deny", Data: "ar:bbbbbbbbbbbbbbbbbbbb:n"},
}}

// started is a console reading from a pipe, its events collected.
type started struct {
	c   *console.Channel
	r   *channeltest.Runner
	out *channeltest.Log
	in  *io.PipeWriter
}

func start(t *testing.T) *started {
	t.Helper()
	pr, pw := io.Pipe()
	t.Cleanup(func() { _ = pw.Close() })
	out := &channeltest.Log{}
	c := console.New(console.Options{In: pr, Out: out})
	r := channeltest.NewRunner(t, c, out)
	r.Start(nil)
	return &started{c: c, r: r, out: out, in: pw}
}

func (s *started) typeLine(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

// send shows a message with buttons and returns its id.
func (s *started) send(t *testing.T, text string, buttons [][]channels.Button) string {
	t.Helper()
	id, err := s.c.Send(context.Background(), channels.Outbound{To: console.Address(), Text: text, Buttons: buttons})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// wantPress checks that the next event is a press by console:local of
// data on message id.
func (s *started) wantPress(t *testing.T, id, data string) {
	t.Helper()
	in := s.r.Next()
	if in.Press == nil {
		t.Fatalf("got a message %q, want a press of %s", in.Text, data)
	}
	if in.Identity() != "console:local" || in.Address() != console.Address() || !in.Direct {
		t.Fatalf("press from %s in %s (direct %v), want console:local in its own chat", in.Identity(), in.Address(), in.Direct)
	}
	if in.Press.Data != data || in.Press.MessageID != id || in.MessageID != id {
		t.Fatalf("press %+v on message %s, want %s on %s", *in.Press, in.MessageID, data, id)
	}
	if in.ExternalID == "" || in.Press.ID == "" {
		t.Fatalf("press without ids: %+v", in)
	}
}

// wantMessage checks that the next event is the message text.
func (s *started) wantMessage(t *testing.T, text string) {
	t.Helper()
	in := s.r.Next()
	if in.Press != nil || in.Text != text {
		t.Fatalf("got %+v, want the message %q", in, text)
	}
}

// TestNumberPressesTheNewestChoices: buttons are printed as numbered
// choices; typing a number presses that button of the newest message that
// has choices, as console:local.
func TestNumberPressesTheNewestChoices(t *testing.T) {
	s := start(t)
	first := s.send(t, "🔐 *Approval needed*", approvalButtons)
	second := s.send(t, "Access request", accessButtons)
	s.r.WaitUntil("choices printed", func() bool {
		return strings.Contains(s.out.String(), "#"+first+"   1) Allow once  2) Always allow  3) Deny") &&
			strings.Contains(s.out.String(), "#"+second+"   1) Approve  2) Deny")
	})
	if !strings.Contains(s.out.String(), "a number answers the newest request") {
		t.Fatalf("the prompt does not say which request a number answers:\n%s", s.out)
	}
	s.typeLine(t, "2")
	s.wantPress(t, second, "ar:bbbbbbbbbbbbbbbbbbbb:n")

	// Once the newest is decided (edited without buttons), numbers answer
	// the one before it.
	if err := s.c.Edit(context.Background(), console.Address(), second, channels.Outbound{Text: "Denied by console:local"}); err != nil {
		t.Fatal(err)
	}
	s.typeLine(t, "1")
	s.wantPress(t, first, "ap:aaaaaaaaaaaaaaaaaaaa:o")
}

// TestAllowAndDenyByID: /allow N and /deny N press on message #N, whatever
// is newer.
func TestAllowAndDenyByID(t *testing.T) {
	s := start(t)
	first := s.send(t, "approval", approvalButtons)
	second := s.send(t, "access", accessButtons)
	s.typeLine(t, "/deny "+first)
	s.wantPress(t, first, "ap:aaaaaaaaaaaaaaaaaaaa:d")
	s.typeLine(t, "/allow "+first)
	s.wantPress(t, first, "ap:aaaaaaaaaaaaaaaaaaaa:o")
	s.typeLine(t, "/allow #"+second)
	s.wantPress(t, second, "ar:bbbbbbbbbbbbbbbbbbbb:y")
}

// TestUnknownChoicePressesNothing: a number out of range, an unknown id or
// a malformed /allow is answered on the terminal and delivers nothing; a
// number with no choice open is an ordinary message.
func TestUnknownChoicePressesNothing(t *testing.T) {
	s := start(t)
	s.typeLine(t, "3")
	s.wantMessage(t, "3")

	id := s.send(t, "access", accessButtons)
	s.typeLine(t, "7")
	s.r.WaitUntil("out-of-range note", func() bool {
		return strings.Contains(s.out.String(), "(#"+id+" has choices 1-2; 7 pressed nothing)")
	})
	s.typeLine(t, "/allow 99")
	s.r.WaitUntil("unknown id note", func() bool {
		return strings.Contains(s.out.String(), "(#99 has no open choices; open: #"+id+")")
	})
	s.typeLine(t, "/deny")
	s.r.WaitUntil("usage note", func() bool {
		return strings.Contains(s.out.String(), "(type /deny N, N being the request's #number)")
	})
	// Nothing was delivered for those lines: the next event is this one.
	s.typeLine(t, "a message")
	s.wantMessage(t, "a message")

	if err := s.c.Edit(context.Background(), console.Address(), id, channels.Outbound{Text: "Approved"}); err != nil {
		t.Fatal(err)
	}
	s.typeLine(t, "/allow "+id)
	s.r.WaitUntil("decided note", func() bool {
		return strings.Contains(s.out.String(), "(#"+id+" has no open choices; nothing is waiting for a decision)")
	})
	s.typeLine(t, "2")
	s.wantMessage(t, "2")
}

// TestPressAnswersAndEditsArePrinted: the answer a platform would show as
// a toast, and an edit of a decided request, are printed.
func TestPressAnswersAndEditsArePrinted(t *testing.T) {
	var out bytes.Buffer
	c := console.New(console.Options{In: strings.NewReader(""), Out: &out})
	ctx := context.Background()
	id, err := c.Send(ctx, channels.Outbound{To: console.Address(), Text: "approval", Buttons: approvalButtons})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AnswerPress(ctx, channels.ButtonPress{ID: "p", MessageID: id}, "Done: allowed once."); err != nil {
		t.Fatal(err)
	}
	if err := c.Edit(ctx, console.Address(), id, channels.Outbound{Text: "✅ *Allowed once* by console:local"}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.Contains(got, "Done: allowed once.\n") || !strings.Contains(got, "(#"+id+" updated)\n✅ Allowed once by console:local\n") {
		t.Fatalf("answer or edit not printed:\n%s", got)
	}
	if err := c.Edit(ctx, console.Address(), "42", channels.Outbound{Text: "x"}); err == nil {
		t.Fatal("editing a message never sent succeeded")
	}
}
