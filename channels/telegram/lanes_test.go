package telegram_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/telegram"
)

// eventName is what a test handler records of an inbound event: its text,
// or "press:<data>" for a button press.
func eventName(in channels.Inbound) string {
	if in.Press != nil {
		return "press:" + in.Press.Data
	}
	return in.Text
}

func TestBatchHandledConcurrentlyAcrossChatsInOrderWithinChat(t *testing.T) {
	h := newHarness(t, nil)
	const chatA, chatB = 100, 200
	// Queued before Start, so the first getUpdates returns them as one batch.
	h.fake.SendText(chatA, chatA, "Ann", "a1")
	h.fake.SendText(chatB, chatB, "Bo", "b1")
	h.fake.PressButton(chatA, chatA, 1, "a-press")
	h.fake.SendText(chatB, chatB, "Bo", "b2")
	h.fake.SendText(chatA, chatA, "Ann", "a3")

	var (
		mu     sync.Mutex
		order  = map[string][]string{}
		bDone  = make(chan struct{})
		aDone  = make(chan struct{})
		holdA1 = make(chan struct{})
	)
	h.Start(func(ctx context.Context, in channels.Inbound) error {
		if in.Text == "a1" {
			select { // chat A is busy until chat B is done
			case <-holdA1:
			case <-ctx.Done():
				return nil
			}
		}
		mu.Lock()
		order[in.ChatID] = append(order[in.ChatID], eventName(in))
		mu.Unlock()
		switch in.Text {
		case "b2":
			close(bDone)
		case "a3":
			close(aDone)
		}
		return nil
	})
	ctx := h.Ctx()
	select {
	case <-bDone:
	case <-ctx.Done():
		t.Fatal("chat B's updates waited for chat A's blocked handler")
	}
	// Chat B is handled, chat A is not: nothing of the batch is confirmed.
	if got := h.fake.Pending(); len(got) != 5 {
		t.Errorf("pending while chat A is still being handled = %v, want all 5 updates", got)
	}
	close(holdA1)
	select {
	case <-aDone:
	case <-ctx.Done():
		t.Fatal("chat A's updates were not all handled")
	}
	// The next poll confirms the whole batch.
	for len(h.fake.Pending()) > 0 {
		polls := h.fake.Requests("getUpdates")
		if err := h.fake.WaitRequests(ctx, "getUpdates", polls+1); err != nil {
			t.Fatalf("batch never confirmed: pending %v", h.fake.Pending())
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"a1", "press:a-press", "a3"}; !slices.Equal(order["100"], want) {
		t.Errorf("chat A handled %q, want %q (in order, presses with messages)", order["100"], want)
	}
	if want := []string{"b1", "b2"}; !slices.Equal(order["200"], want) {
		t.Errorf("chat B handled %q, want %q", order["200"], want)
	}
}

func TestParallelChatsBounded(t *testing.T) {
	h := newHarness(t, func(o *telegram.Options) { o.MaxParallelChats = 2 })
	const chats = 5
	for chat := range int64(chats) {
		h.fake.SendText(chat+1, chat+1, "U", "hi")
	}
	var (
		mu            sync.Mutex
		running, peak int
		handled       int
		release       = make(chan struct{})
		entered       = make(chan struct{}, chats)
	)
	h.Start(func(ctx context.Context, in channels.Inbound) error {
		mu.Lock()
		running++
		peak = max(peak, running)
		mu.Unlock()
		entered <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		mu.Lock()
		running--
		handled++
		mu.Unlock()
		return nil
	})
	ctx := h.Ctx()
	for range 2 {
		select {
		case <-entered:
		case <-ctx.Done():
			t.Fatal("fewer than 2 chats handled at once")
		}
	}
	time.Sleep(200 * time.Millisecond) // give a third chat the chance to start
	mu.Lock()
	if running != 2 {
		t.Errorf("%d chats handled at once with MaxParallelChats 2", running)
	}
	mu.Unlock()
	close(release)
	for range chats - 2 {
		select {
		case <-entered:
		case <-ctx.Done():
			t.Fatal("not every chat was handled")
		}
	}
	h.Stop()
	mu.Lock()
	defer mu.Unlock()
	if peak != 2 || handled != chats {
		t.Errorf("peak %d chats at once, %d handled; want 2 and %d", peak, handled, chats)
	}
}

func TestStopWaitsForRunningHandlers(t *testing.T) {
	h := newHarness(t, nil)
	h.fake.SendText(1, 1, "Ann", "slow")
	h.fake.SendText(2, 2, "Bo", "other")
	entered := make(chan struct{})
	var (
		mu       sync.Mutex
		returned bool
	)
	h.Start(func(ctx context.Context, in channels.Inbound) error {
		if in.Text != "slow" {
			return nil
		}
		close(entered)
		<-ctx.Done()
		time.Sleep(50 * time.Millisecond) // still busy after the cancel
		mu.Lock()
		returned = true
		mu.Unlock()
		return nil
	})
	select {
	case <-entered:
	case <-h.Ctx().Done():
		t.Fatal("handler never called")
	}
	h.Stop()
	mu.Lock()
	defer mu.Unlock()
	if !returned {
		t.Error("Start returned while a handler was still running")
	}
}
