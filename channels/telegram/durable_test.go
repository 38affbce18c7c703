package telegram_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
)

var errNotStored = errors.New("storage unavailable")

// flakyHandler fails every call until healed, then delivers to out.
type flakyHandler struct {
	mu     sync.Mutex
	calls  map[string]int // external id → calls
	healed bool
	called chan struct{}
	out    chan channels.Inbound
}

func newFlakyHandler() *flakyHandler {
	return &flakyHandler{calls: map[string]int{}, called: make(chan struct{}, 1000), out: make(chan channels.Inbound, 100)}
}

func (f *flakyHandler) handle(_ context.Context, in channels.Inbound) error {
	f.mu.Lock()
	f.calls[in.ExternalID]++
	healed := f.healed
	f.mu.Unlock()
	f.called <- struct{}{}
	if !healed {
		return errNotStored
	}
	f.out <- in
	return nil
}

func (f *flakyHandler) heal() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.healed = true
}

func (f *flakyHandler) callsOf(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[id]
}

// waitCalls waits for n more calls of the handler.
func (f *flakyHandler) waitCalls(ctx context.Context, t *testing.T, n int) {
	t.Helper()
	for range n {
		select {
		case <-f.called:
		case <-ctx.Done():
			t.Fatal("handler not called again")
		}
	}
}

func TestUnstoredUpdateRetriedAndNotConfirmed(t *testing.T) {
	h := newHarness(t, nil)
	f := newFlakyHandler()
	h.Start(f.handle)
	h.waitPolling()
	ctx := h.Ctx()

	upd := h.fake.SendText(5, 5, "Ann", "important")
	id := strconv.FormatInt(upd, 10)
	f.waitCalls(ctx, t, 1)
	polls := h.fake.Requests("getUpdates")
	f.waitCalls(ctx, t, 3) // retried, with backoff
	if got := h.fake.Pending(); !slices.Contains(got, upd) {
		t.Fatalf("update confirmed while its handler fails: pending %v", got)
	}
	if got := h.fake.Requests("getUpdates"); got != polls {
		t.Errorf("polled %d more times while an update was not stored", got-polls)
	}
	later := h.fake.SendText(5, 5, "Ann", "later")

	f.heal()
	if in := <-f.out; in.ExternalID != id || in.Text != "important" {
		t.Fatalf("first stored event = %+v", in)
	}
	select {
	case in := <-f.out:
		if in.ExternalID != strconv.FormatInt(later, 10) {
			t.Errorf("second stored event = %+v, want the later message", in)
		}
	case <-ctx.Done():
		t.Fatal("the later message was never delivered")
	}
	for len(h.fake.Pending()) > 0 {
		n := h.fake.Requests("getUpdates")
		if err := h.fake.WaitRequests(ctx, "getUpdates", n+1); err != nil {
			t.Fatalf("updates never confirmed: pending %v", h.fake.Pending())
		}
	}
	t.Logf("the failing update was handed to the handler %d times", f.callsOf(id))
	logs := h.Log.String()
	if n := channeltest.CountLines(logs, "event not stored"); n != 1 {
		t.Errorf("%d warnings for one failure streak, want 1:\n%s", n, logs)
	}
	if n := channeltest.CountLines(logs, "events stored again"); n != 1 {
		t.Errorf("recovery logged %d times, want once:\n%s", n, logs)
	}
}

func TestUnstoredUpdateRedeliveredAfterRestart(t *testing.T) {
	h := newHarness(t, nil)
	f := newFlakyHandler()
	h.Start(f.handle)
	h.waitPolling()
	upd := h.fake.SendText(6, 6, "Bo", "do not lose me")
	f.waitCalls(h.Ctx(), t, 2)
	h.Stop() // storage never came back before the stop

	if got := h.fake.Pending(); !slices.Contains(got, upd) {
		t.Fatalf("an update that was never stored was confirmed at stop: pending %v", got)
	}
	restarted := newHarnessOn(t, h.fake, nil)
	restarted.Start(nil)
	if in := restarted.Next(); in.ExternalID != strconv.FormatInt(upd, 10) || in.Text != "do not lose me" {
		t.Errorf("after restart got %+v", in)
	}
}

func TestStopEndsRetries(t *testing.T) {
	h := newHarness(t, nil)
	f := newFlakyHandler()
	h.Start(f.handle)
	h.waitPolling()
	upd := h.fake.SendText(7, 7, "Cy", "failing")
	f.waitCalls(h.Ctx(), t, 2)
	h.Stop()
	n := f.callsOf(strconv.FormatInt(upd, 10))
	time.Sleep(100 * time.Millisecond) // RetryMax is 50ms: a live retry would call again
	if got := f.callsOf(strconv.FormatInt(upd, 10)); got != n {
		t.Errorf("handler called %d more times after Start returned", got-n)
	}
}
