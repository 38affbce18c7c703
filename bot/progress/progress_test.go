package progress

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
)

// progressCall is one call the progress display made on a channel.
type progressCall struct {
	Op   string // "send", "edit", "delete", "typing"
	ID   string
	Text string
}

// progressChannel records what the progress display does; editErrs are
// returned by the next edits, in order.
type progressChannel struct {
	mu       sync.Mutex
	calls    []progressCall
	editErrs []error
	nextID   int
}

func (c *progressChannel) Platform() string { return "mem" }

func (c *progressChannel) Start(ctx context.Context, _ channels.Handler) error {
	<-ctx.Done()
	return nil
}

func (c *progressChannel) Send(_ context.Context, m channels.Outbound) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextID++
	id := fmt.Sprint(c.nextID)
	c.calls = append(c.calls, progressCall{Op: "send", ID: id, Text: m.Text})
	return id, nil
}

func (c *progressChannel) Edit(_ context.Context, _ channels.Address, id string, m channels.Outbound) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, progressCall{Op: "edit", ID: id, Text: m.Text})
	if len(c.editErrs) > 0 {
		err := c.editErrs[0]
		c.editErrs = c.editErrs[1:]
		return err
	}
	return nil
}

func (c *progressChannel) Typing(context.Context, channels.Address) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, progressCall{Op: "typing"})
	return nil
}

func (c *progressChannel) ops(op string) []progressCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []progressCall
	for _, call := range c.calls {
		if call.Op == op {
			out = append(out, call)
		}
	}
	return out
}

// deletingChannel can also delete messages.
type deletingChannel struct{ progressChannel }

func (c *deletingChannel) Delete(_ context.Context, _ channels.Address, id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, progressCall{Op: "delete", ID: id})
	return nil
}

// countingLock counts refreshes.
type countingLock struct {
	mu        sync.Mutex
	refreshes int
}

func (l *countingLock) Refresh(context.Context, time.Duration) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refreshes++
	return nil
}

// waitUntil polls cond until it holds, failing the test after 10 s.
var waitUntil = channeltest.WaitUntil

// startOn starts a display for chat 1 on ch, refreshing lock (nil: none).
func startOn(ch channels.Channel, lock Lock) *Display {
	return Start(context.Background(), Options{To: channels.Address{Platform: "mem", ChatID: "1"},
		Channel: ch, Lock: lock, LockTTL: 30 * time.Second, Log: slog.New(slog.DiscardHandler)})
}

func toolCall(name, args string) agentcore.ToolCall {
	return agentcore.ToolCall{ID: "c", Name: name, Arguments: json.RawMessage(args)}
}

// TestProgressQuickRunShowsNothing: a run that answers within 100 ms
// shows no note and no typing.
func TestProgressQuickRunShowsNothing(t *testing.T) {
	ch := &deletingChannel{}
	p := startOn(ch, nil)
	time.Sleep(100 * time.Millisecond)
	p.Step(toolCall("datetime", `{}`))
	p.Stop(context.Background())
	if len(ch.calls) != 0 {
		t.Errorf("a 100 ms run made channel calls %+v, want none", ch.calls)
	}
}

// TestProgressNoteEditedThenDeleted: a run of 3 s with two tool steps
// shows one note, edited with the steps, and deletes it at the end.
func TestProgressNoteEditedThenDeleted(t *testing.T) {
	ch := &deletingChannel{}
	lock := &countingLock{}
	p := startOn(ch, lock)
	start := time.Now()
	time.Sleep(500 * time.Millisecond)
	p.Step(toolCall("exec", `{"command":"ls -la\n/tmp"}`))
	waitUntil(t, "the note is sent", func() bool { return len(ch.ops("send")) == 1 })
	t.Logf("note sent after %s", time.Since(start))
	time.Sleep(500 * time.Millisecond)
	p.Step(toolCall("datetime", `{"tz":"Europe/Paris"}`))
	waitUntil(t, "the note shows the second step", func() bool {
		e := ch.ops("edit")
		return len(e) > 0 && strings.Contains(e[len(e)-1].Text, "datetime")
	})
	if d := time.Since(start); d < 3*time.Second {
		time.Sleep(3*time.Second - d)
	}
	p.Stop(context.Background())

	sends, edits, deletes := ch.ops("send"), ch.ops("edit"), ch.ops("delete")
	if len(sends) != 1 {
		t.Fatalf("sends = %+v, want one note", sends)
	}
	note := sends[0]
	if !strings.HasPrefix(note.Text, progressNote) || !strings.Contains(note.Text, "`exec ls -la /tmp`") {
		t.Errorf("note = %q, want the working line and the first step", note.Text)
	}
	last := edits[len(edits)-1]
	if last.ID != note.ID || !strings.Contains(last.Text, "`exec ls -la /tmp`") ||
		!strings.Contains(last.Text, "`datetime {\"tz\":\"Europe/Paris\"}`") {
		t.Errorf("last edit = %+v, want note %s with both steps", last, note.ID)
	}
	if len(deletes) != 1 || deletes[0].ID != note.ID {
		t.Errorf("deletes = %+v, want the note %s deleted", deletes, note.ID)
	}
	if len(ch.ops("typing")) == 0 {
		t.Error("no typing indicator during a 3 s run")
	}
	if !strings.Contains(ch.calls[0].Op, "typing") {
		t.Errorf("first call = %+v, want typing before the note", ch.calls[0])
	}
	// Stop is final: nothing happens afterwards, and a second Stop is harmless.
	n := len(ch.calls)
	p.Stop(context.Background())
	time.Sleep(300 * time.Millisecond)
	if len(ch.calls) != n {
		t.Errorf("calls after Stop: %+v", ch.calls[n:])
	}
	lock.mu.Lock()
	defer lock.mu.Unlock()
	t.Logf("%d edits, %d lock refreshes in %s", len(edits), lock.refreshes, time.Since(start))
}

// TestProgressRespectsRetryAfter: while the platform says 429 the note is
// not edited; after the wait it is.
func TestProgressRespectsRetryAfter(t *testing.T) {
	ch := &deletingChannel{}
	ch.editErrs = []error{&channels.RetryAfterError{After: 1500 * time.Millisecond, Err: errors.New("429")}}
	p := startOn(ch, nil)
	defer p.Stop(context.Background())
	waitUntil(t, "the note is sent", func() bool { return len(ch.ops("send")) == 1 })
	p.Step(toolCall("exec", `{"command":"one"}`))
	waitUntil(t, "the first edit (refused with 429)", func() bool { return len(ch.ops("edit")) == 1 })
	refused := time.Now()
	for i := range 8 {
		p.Step(toolCall("exec", fmt.Sprintf(`{"command":"step %d"}`, i)))
		time.Sleep(100 * time.Millisecond)
	}
	if n := len(ch.ops("edit")); n != 1 && time.Since(refused) < 1500*time.Millisecond {
		t.Errorf("%d edit attempts within the 429's 1.5 s, want none after the refused one", n-1)
	}
	waitUntil(t, "an edit after the wait", func() bool { return len(ch.ops("edit")) >= 2 })
	if d := time.Since(refused); d < 1500*time.Millisecond {
		t.Errorf("edited again %s after a 429 asking for 1.5 s", d)
	}
	edits := ch.ops("edit")
	if last := edits[len(edits)-1].Text; !strings.Contains(last, "step 7") || !strings.Contains(last, "earlier step") {
		t.Errorf("edit after the wait = %q, want the newest steps and a count of earlier ones", last)
	}
}

// TestProgressFallsBackToEdit: where messages cannot be deleted the note
// is edited to a short "done" line.
func TestProgressFallsBackToEdit(t *testing.T) {
	ch := &progressChannel{}
	p := startOn(ch, nil)
	waitUntil(t, "the note is sent", func() bool { return len(ch.ops("send")) == 1 })
	p.Stop(context.Background())
	edits := ch.ops("edit")
	if len(edits) != 1 || edits[0].Text != progressDone {
		t.Errorf("edits = %+v, want one turning the note into %q", edits, progressDone)
	}
}

func TestShortArgs(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"command":"ls   -la\n/tmp"}`, "ls -la /tmp"},
		{`{"b":1,"a":"x"}`, `{"a":"x","b":1}`},
		{`{}`, ""},
		{`not json`, "not json"},
		{`{"command":"` + strings.Repeat("é", 100) + `"}`, strings.Repeat("é", progressArgsMax-1) + "…"},
	} {
		if got := shortArgs(json.RawMessage(c.in)); got != c.want {
			t.Errorf("shortArgs(%s) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := StepLine(toolCall("exec", "{\"command\":\"echo `id`\"}")); got != "`exec echo 'id'`" {
		t.Errorf("stepLine with backticks = %q", got)
	}
}
