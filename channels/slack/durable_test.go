package slack_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
	"github.com/switchboard-chat/switchboard/channels/slack/slacktest"
)

var errNotStored = errors.New("storage unavailable")

// failingTexts is a handler that fails for the texts in fail (until they
// are removed) and delivers the rest to out.
type failingTexts struct {
	mu   sync.Mutex
	fail map[string]bool
	out  chan channels.Inbound
}

func newFailingTexts(texts ...string) *failingTexts {
	f := &failingTexts{fail: map[string]bool{}, out: make(chan channels.Inbound, 100)}
	for _, t := range texts {
		f.fail[t] = true
	}
	return f
}

func (f *failingTexts) handle(_ context.Context, in channels.Inbound) error {
	f.mu.Lock()
	fail := f.fail[in.Text]
	f.mu.Unlock()
	if fail {
		return errNotStored
	}
	f.out <- in
	return nil
}

func (f *failingTexts) heal(text string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.fail, text)
}

func (f *failingTexts) next(t *testing.T) channels.Inbound {
	t.Helper()
	select {
	case in := <-f.out:
		return in
	case <-time.After(15 * time.Second):
		t.Fatal("no inbound event")
		return channels.Inbound{}
	}
}

func TestAckWaitsForTheHandler(t *testing.T) {
	h := newHarness(t, nil)
	release := make(chan struct{})
	entered := make(chan string, 10)
	h.Start(func(ctx context.Context, in channels.Inbound) error {
		entered <- in.Text
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	ctx := h.Ctx()
	envs := sendThree(t, h, "Ev")
	if got := <-entered; got != "0" {
		t.Fatalf("first event handled = %q", got)
	}
	if un := h.fake.Unacked(); !slices.Contains(un, envs[0]) {
		t.Errorf("envelope acknowledged before its handler returned: unacked %v", un)
	}
	close(release)
	for i, env := range envs {
		if err := h.fake.WaitAck(ctx, env); err != nil {
			t.Fatalf("envelope %d not acknowledged after it was handled: %v", i, err)
		}
		if i > 0 {
			if got := <-entered; got != fmt.Sprint(i) {
				t.Errorf("event %d handled as %q: order lost", i, got)
			}
		}
	}
}

func TestUnstoredEventNotAcknowledgedAndRedelivered(t *testing.T) {
	h := newHarness(t, nil)
	f := newFailingTexts("unlucky")
	h.Start(f.handle)
	ctx := h.Ctx()
	if err := h.fake.WaitConnections(ctx, 1); err != nil {
		t.Fatal(err)
	}
	event := slacktest.Msg{Channel: "D0ANN", User: "U0ANN", Text: "unlucky"}.Event()
	failed, err := h.fake.SendEvent("EvUnlucky", event)
	if err != nil {
		t.Fatal(err)
	}
	later, err := h.fake.SendEvent("EvLater", slacktest.Msg{Channel: "D0ANN", User: "U0ANN", Text: "later"}.Event())
	if err != nil {
		t.Fatal(err)
	}
	if err := h.fake.WaitAck(ctx, later); err != nil {
		t.Fatal(err)
	}
	if in := f.next(t); in.Text != "later" {
		t.Fatalf("delivered %+v", in)
	}
	// Events are handled in order: the failed one was handled before.
	if n := h.fake.Acks(failed); n != 0 {
		t.Fatalf("an event the handler did not store was acknowledged %d times", n)
	}
	if n := channeltest.CountLines(h.Log.String(), "not stored"); n != 1 {
		t.Errorf("failure logged %d times, want once:\n%s", n, h.Log)
	}

	// Slack sends the unacknowledged event again; now storage is back.
	f.heal("unlucky")
	again, err := h.fake.SendEvent("EvUnlucky", event)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.fake.WaitAck(ctx, again); err != nil {
		t.Fatal(err)
	}
	if in := f.next(t); in.Text != "unlucky" || in.ExternalID != "EvUnlucky" {
		t.Errorf("redelivered = %+v", in)
	}
}

func TestQueuedEventsNotAcknowledgedAtStop(t *testing.T) {
	h := newHarness(t, nil)
	entered := make(chan struct{}, 10)
	h.Start(func(ctx context.Context, in channels.Inbound) error {
		entered <- struct{}{}
		<-ctx.Done() // storage hangs until the stop
		return ctx.Err()
	})
	envs := sendThree(t, h, "EvStop")
	<-entered
	h.Stop()
	for _, env := range envs {
		if n := h.fake.Acks(env); n != 0 {
			t.Errorf("envelope %s acknowledged at stop though never stored", env)
		}
	}
}

func TestWebhookAnswers503WhenNotStored(t *testing.T) {
	h := newHookHarness(t)
	f := newFailingTexts("unlucky")
	h.Start(f.handle)
	h.WaitReady()
	event := slacktest.Msg{Channel: "D0ANN", User: "U0ANN", Text: "unlucky"}.Event()
	if w := h.postEvent("EvHTTPFail", event); w.Code != http.StatusServiceUnavailable {
		t.Fatalf("event the handler did not store answered %d, want 503", w.Code)
	}
	f.heal("unlucky")
	// Slack retries with a new timestamp (and so a new signature).
	w := h.post(slacktest.EventBody("EvHTTPFail", event), "application/json", secret, time.Now().Add(time.Second))
	if w.Code != http.StatusOK {
		t.Fatalf("retry answered %d: %s", w.Code, w.Body)
	}
	if in := f.next(t); in.ExternalID != "EvHTTPFail" || in.Text != "unlucky" {
		t.Errorf("stored = %+v", in)
	}
}

// sendThree waits for the socket connection, then sends three direct
// messages "0", "1", "2" as events named prefix0…2 and returns their
// envelope ids.
func sendThree(t *testing.T, h *harness, prefix string) []string {
	t.Helper()
	if err := h.fake.WaitConnections(h.Ctx(), 1); err != nil {
		t.Fatal(err)
	}
	var envs []string
	for i := range 3 {
		env, err := h.fake.SendEvent(fmt.Sprintf("%s%d", prefix, i), slacktest.Msg{Channel: "D0ANN", User: "U0ANN", Text: fmt.Sprint(i)}.Event())
		if err != nil {
			t.Fatal(err)
		}
		envs = append(envs, env)
	}
	return envs
}
