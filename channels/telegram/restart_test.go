package telegram_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
)

// TestRestartDeliversUnhandledUpdates: Start stops (a lost leadership)
// while an update of the current batch is still being handled and not
// stored; the next Start of the same channel gets that update again
// instead of confirming it with its first getUpdates.
func TestRestartDeliversUnhandledUpdates(t *testing.T) {
	h := newHarness(t, nil)
	blocked := make(chan struct{})
	h.Start(func(ctx context.Context, in channels.Inbound) error {
		if in.ChatID == "2" {
			close(blocked)
			<-ctx.Done() // storage hangs until the stop
			return errors.New("not stored")
		}
		h.Inbound <- in
		return nil
	})
	h.waitPolling()
	first := h.fake.SendText(1, 1, "Ann", "stored")
	stuck := h.fake.SendText(2, 2, "Bob", "not stored before the stop")
	if in := h.Next(); in.ExternalID != strconv.FormatInt(first, 10) {
		t.Fatalf("got %+v", in)
	}
	select {
	case <-blocked:
	case <-time.After(15 * time.Second):
		t.Fatal("the second update never reached the handler")
	}
	h.Stop()

	h.Start(nil)
	deadline := time.After(15 * time.Second)
	for {
		select {
		case in := <-h.Inbound:
			if in.ExternalID == strconv.FormatInt(stuck, 10) {
				return // delivered again; the first may come again too (dedupe)
			}
		case <-deadline:
			t.Fatalf("update %d was confirmed without being handled; pending %v; logs:\n%s", stuck, h.fake.Pending(), h.Log)
		}
	}
}
