package discord_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
)

var errNotStored = errors.New("storage unavailable")

// TestUnstoredEventRetriedInProcess: the gateway cannot redeliver, so an
// event the handler did not store is handed to it again until it is, and
// later events wait for it.
func TestUnstoredEventRetriedInProcess(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	var (
		mu    sync.Mutex
		calls = map[string]int{}
	)
	const failures = 3
	h.Start(func(_ context.Context, in channels.Inbound) error {
		mu.Lock()
		calls[in.Text]++
		n := calls[in.Text]
		mu.Unlock()
		if in.Text == "unlucky" && n <= failures {
			return errNotStored
		}
		h.Inbound <- in
		return nil
	})
	h.WaitReady()
	h.fake.SendMessage(channelID, guildID, userID, "Ann", "unlucky")
	h.fake.SendMessage(channelID, guildID, userID, "Ann", "later")
	if in := h.Next(); in.Text != "unlucky" {
		t.Fatalf("first stored event = %+v, want the one that failed first", in)
	}
	if in := h.Next(); in.Text != "later" {
		t.Fatalf("second stored event = %+v", in)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls["unlucky"] != failures+1 || calls["later"] != 1 {
		t.Errorf("calls = %v, want %d for the failing event and 1 for the later one", calls, failures+1)
	}
	logs := h.Log.String()
	if n := channeltest.CountLines(logs, "event not stored"); n != 1 {
		t.Errorf("%d warnings for one failure streak, want 1:\n%s", n, logs)
	}
	if n := channeltest.CountLines(logs, "events stored again"); n != 1 {
		t.Errorf("recovery logged %d times, want once:\n%s", n, logs)
	}
}

// TestStopEndsInProcessRetries: a stop ends the retries of an event that
// is still not stored, and says so.
func TestStopEndsInProcessRetries(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	called := make(chan struct{}, 100)
	h.Start(func(context.Context, channels.Inbound) error {
		called <- struct{}{}
		return errNotStored
	})
	h.WaitReady()
	h.fake.SendMessage(channelID, guildID, userID, "Ann", "never stored")
	for range 2 {
		select {
		case <-called:
		case <-time.After(15 * time.Second):
			t.Fatal("handler not called again")
		}
	}
	h.Stop()
	n := len(called)
	time.Sleep(100 * time.Millisecond) // RetryMax is 50ms: a live retry would call again
	if got := len(called); got != n {
		t.Errorf("handler called %d more times after Start returned", got-n)
	}
	if channeltest.CountLines(h.Log.String(), "dropped at shutdown") != 1 {
		t.Errorf("the event given up at the stop was not logged:\n%s", h.Log)
	}
}
