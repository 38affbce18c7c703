package stream

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/channels"
)

// call is one platform call the fake chat got.
type call struct {
	op, id, text string
	at           time.Time
}

// fakeChat is a channels.LiveAnswerer that records its calls.
type fakeChat struct {
	limit int
	mu    sync.Mutex
	calls []call
	texts map[string]string // what each message shows
	n     int
	// fail, when set, answers the call instead (nil: success).
	fail func(op string, n int) error
	// hold, when set, blocks each call until it is closed, after telling
	// entered.
	hold, entered chan struct{}
}

func newFakeChat() *fakeChat { return &fakeChat{limit: 4000, texts: map[string]string{}} }

func (f *fakeChat) LiveLimit() int { return f.limit }

func (f *fakeChat) record(op, id, text string) error {
	if f.hold != nil {
		select {
		case f.entered <- struct{}{}:
		default:
		}
		<-f.hold
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		if err := f.fail(op, len(f.calls)); err != nil {
			return err
		}
	}
	f.calls = append(f.calls, call{op: op, id: id, text: text, at: time.Now()})
	f.texts[id] = text
	return nil
}

func (f *fakeChat) BeginLive(_ context.Context, _ channels.Address, _, _, text string) (string, error) {
	f.mu.Lock()
	f.n++
	id := fmt.Sprint("m", f.n)
	f.mu.Unlock()
	return id, f.record("begin", id, text)
}

func (f *fakeChat) UpdateLive(_ context.Context, _ channels.Address, id, text string) error {
	return f.record("update", id, text)
}

func (f *fakeChat) FinishLive(context.Context, channels.Outbound) (string, error) {
	panic("FinishLive is the dispatcher's")
}

func (f *fakeChat) snapshot() ([]call, map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	texts := map[string]string{}
	for k, v := range f.texts {
		texts[k] = v
	}
	return append([]call(nil), f.calls...), texts
}

// waitShown waits until message id shows text.
func waitShown(t *testing.T, f *fakeChat, id, text string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if _, texts := f.snapshot(); texts[id] == text {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	_, texts := f.snapshot()
	t.Fatalf("message %s shows %q, want %q", id, texts[id], text)
}

func start(t *testing.T, f *fakeChat, every time.Duration, store Store) *Answer {
	t.Helper()
	a := Start(context.Background(), Options{Session: "s", To: channels.Address{Platform: "fake", ChatID: "1"},
		Channel: f, Every: every, Store: store})
	t.Cleanup(a.Stop)
	return a
}

func TestFirstWordsAtOnceThenPaced(t *testing.T) {
	f := newFakeChat()
	a := start(t, f, 200*time.Millisecond, nil)
	begun := time.Now()
	a.Text("Hello wor")
	waitShown(t, f, "m1", "Hello")
	if d := time.Since(begun); d > 100*time.Millisecond {
		t.Fatalf("first words shown after %s, want at once", d)
	}
	text := "Hello wor"
	for i := range 100 { // a second of words, every 10 ms
		text += fmt.Sprint("d", i, " w")
		a.Text(text)
		time.Sleep(10 * time.Millisecond)
	}
	waitShown(t, f, "m1", strings.TrimSuffix(text, " w"))
	calls, _ := f.snapshot()
	for i := 1; i < len(calls); i++ {
		if gap := calls[i].at.Sub(calls[i-1].at); gap < 190*time.Millisecond {
			t.Fatalf("updates %d and %d %s apart, want at least the pace (200ms)", i-1, i, gap)
		}
	}
	if len(calls) > 8 {
		t.Fatalf("%d calls for ~1.2 s of words at one per 200ms", len(calls))
	}
	if ids := a.Finish(context.Background()); len(ids) != 1 || ids[0] != "m1" {
		t.Fatalf("Finish = %v, want [m1]", ids)
	}
}

func TestRetryAfterPausesAndSkips(t *testing.T) {
	f := newFakeChat()
	refusedOnce := false
	f.fail = func(op string, _ int) error {
		if op == "update" && !refusedOnce { // the first edit
			refusedOnce = true
			return &channels.RetryAfterError{After: 400 * time.Millisecond}
		}
		return nil
	}
	a := start(t, f, 10*time.Millisecond, nil)
	a.Text("one ")
	waitShown(t, f, "m1", "one")
	a.Text("one two ") // refused: 429
	time.Sleep(50 * time.Millisecond)
	refused := time.Now()
	for _, w := range []string{"one two three ", "one two three four ", "one two three four five "} {
		a.Text(w)
		time.Sleep(30 * time.Millisecond)
	}
	waitShown(t, f, "m1", "one two three four five")
	calls, _ := f.snapshot()
	if len(calls) != 2 {
		t.Fatalf("calls = %+v, want the first words and one update after the pause (the ones due meanwhile skipped)", calls)
	}
	if calls[1].at.Sub(refused) < 300*time.Millisecond {
		t.Fatalf("updated %s after the 429, want its retry_after (400ms) waited out", calls[1].at.Sub(refused))
	}
}

func TestFinishWaitsForTheCallUnderWayAndStopsUpdates(t *testing.T) {
	f := newFakeChat()
	f.hold, f.entered = make(chan struct{}), make(chan struct{}, 1)
	a := start(t, f, time.Millisecond, nil)
	a.Text("first ")
	<-f.entered // the first message is being sent
	done := make(chan []string)
	go func() { done <- a.Finish(context.Background()) }()
	select {
	case ids := <-done:
		t.Fatalf("Finish returned %v with the first message still being sent", ids)
	case <-time.After(50 * time.Millisecond):
	}
	close(f.hold)
	if ids := <-done; len(ids) != 1 || ids[0] != "m1" {
		t.Fatalf("Finish = %v, want the message sent meanwhile", ids)
	}
	a.Text("first and more ")
	time.Sleep(30 * time.Millisecond)
	if calls, _ := f.snapshot(); len(calls) != 1 {
		t.Fatalf("calls after Finish: %+v", calls)
	}
	a.Handed()
	a.Text("the next answer ")
	waitShown(t, f, "m2", "the next answer")
}

func TestLongAnswerGoesOnInNewMessages(t *testing.T) {
	f := newFakeChat()
	f.limit = 40
	a := start(t, f, time.Millisecond, nil)
	text := "intro line\n```\n" + strings.Repeat("code line\n", 6) + "```\nend"
	a.Text(text + " ")
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, texts := f.snapshot()
		var joined strings.Builder
		for i := 1; i <= len(texts); i++ {
			joined.WriteString(texts[fmt.Sprint("m", i)])
		}
		if len(texts) >= 3 && strings.Contains(joined.String(), "end") {
			for id, s := range texts {
				if r := len([]rune(s)); r > f.limit {
					t.Fatalf("%s has %d runes, over the limit %d", id, r, f.limit)
				}
				if openFence(s, false) {
					t.Fatalf("%s leaves a code fence open: %q", id, s)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("long answer shown as %v", texts)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if ids := a.Finish(context.Background()); len(ids) < 3 {
		t.Fatalf("Finish = %v, want every live message", ids)
	}
}

func TestStepLineAndNextCall(t *testing.T) {
	f := newFakeChat()
	a := start(t, f, time.Millisecond, nil)
	a.Text("Let me look. ")
	a.Step(agentcore.ToolCall{Name: "exec", Arguments: json.RawMessage(`{"command":"git pull"}`)})
	waitShown(t, f, "m1", "Let me look.\n\n🔧 `exec git pull`…")
	a.Text("Pulled ")
	waitShown(t, f, "m1", "Pulled")
}

// memStore is a Store in memory.
type memStore struct {
	mu  sync.Mutex
	ids map[string][]string
}

func (m *memStore) SaveLive(_ context.Context, session string, _ channels.Address, ids []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ids[session] = append([]string(nil), ids...)
	return nil
}

func (m *memStore) EndLive(_ context.Context, session string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.ids, session)
	return nil
}

func (m *memStore) LiveMessages(_ context.Context, session string, _ channels.Address) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ids[session], nil
}

func TestNextRunTakesOverWhatADeadRunLeft(t *testing.T) {
	store := &memStore{ids: map[string][]string{}}
	f := newFakeChat()
	dead := start(t, f, time.Millisecond, store)
	dead.Text("half an ans ")
	waitShown(t, f, "m1", "half an ans")
	// The run dies: nothing is finished. The next run of the session:
	next := start(t, f, time.Millisecond, store)
	next.Text("A whole ")
	waitShown(t, f, "m1", "A whole")
	if ids := next.Finish(context.Background()); len(ids) != 1 || ids[0] != "m1" {
		t.Fatalf("Finish = %v, want the dead run's message taken over", ids)
	}
	if calls, _ := f.snapshot(); calls[len(calls)-1].op != "update" {
		t.Fatalf("calls = %+v, want the message edited, not a new one", calls)
	}
	quiet := start(t, f, time.Millisecond, store)
	if ids := quiet.Finish(context.Background()); len(ids) != 1 {
		t.Fatalf("a run that shows nothing still replaces what was left: Finish = %v", ids)
	}
}

func TestNilAnswerShowsNothing(t *testing.T) {
	var a *Answer
	a.Text("x ")
	a.Step(agentcore.ToolCall{Name: "exec"})
	a.Handed()
	a.Stop()
	if ids := a.Finish(context.Background()); ids != nil {
		t.Fatalf("Finish = %v", ids)
	}
}

func TestLeaveKeepsWhatIsShownAndStartsAfresh(t *testing.T) {
	store := &memStore{ids: map[string][]string{}}
	f := newFakeChat()
	a := start(t, f, time.Millisecond, store)
	a.Text("I need to run a command. ")
	a.Step(agentcore.ToolCall{Name: "exec", Arguments: json.RawMessage(`{"command":"rm -rf build"}`)})
	waitShown(t, f, "m1", "I need to run a command.\n\n🔧 `exec rm -rf build`…")
	a.Leave(context.Background(), "⏸ Waiting for an approval.")
	if ids, _ := store.LiveMessages(context.Background(), "s", channels.Address{}); ids != nil {
		t.Fatalf("left answer still recorded: %v", ids)
	}
	next := start(t, f, time.Millisecond, store)
	next.Text("Done. ")
	waitShown(t, f, "m2", "Done.")
	if _, texts := f.snapshot(); texts["m1"] != "I need to run a command.\n\n⏸ Waiting for an approval." {
		t.Fatalf("the left message changed to %q", texts["m1"])
	}
}

func TestOnlyWholeWordsAreShown(t *testing.T) {
	f := newFakeChat()
	a := Start(context.Background(), Options{Session: "s", To: channels.Address{Platform: "fake", ChatID: "1"},
		Channel: f, Every: time.Millisecond, Scrub: func(s string) string { return strings.ReplaceAll(s, "sk-secret-42", "[secret]") }})
	t.Cleanup(a.Stop)
	a.Text("the key is sk-sec")
	waitShown(t, f, "m1", "the key is")
	a.Text("the key is sk-secret-42 and")
	waitShown(t, f, "m1", "the key is [secret]")
	for _, c := range func() []call { c, _ := f.snapshot(); return c }() {
		if strings.Contains(c.text, "sk-") {
			t.Fatalf("a head of the secret was shown: %q", c.text)
		}
	}
}

func TestSaidIsTheAnswerWithoutTheStep(t *testing.T) {
	f := newFakeChat()
	a := start(t, f, time.Millisecond, nil)
	a.Text("Checking the repo now ")
	a.Step(agentcore.ToolCall{Name: "exec", Arguments: json.RawMessage(`{"command":"git pull"}`)})
	if got := a.Said(); got != "Checking the repo now" {
		t.Fatalf("Said = %q", got)
	}
}
