package bot_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// heldMarks is an Outbox whose MarkSentAll waits until release is closed:
// a mark that PostgreSQL is slow to write.
type heldMarks struct {
	bot.Outbox
	release chan struct{}
	calls   chan []bot.Sent
}

func (h *heldMarks) MarkSentAll(ctx context.Context, sent []bot.Sent) error {
	h.calls <- sent
	<-h.release
	return h.Outbox.MarkSentAll(ctx, sent)
}

// A chat's next row is sent only once the previous row's mark is written,
// so a crash leaves at most one send per chat unrecorded (to be sent again
// after the restart); another chat does not wait for it.
func TestDispatcherSendsAChatsNextRowAfterTheLastIsMarked(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := pgtest.Open(t, ctx)
	for _, m := range []struct{ chat, text string }{{"a", "a1"}, {"a", "a2"}, {"b", "b1"}} {
		if _, err := db.Enqueue(ctx, bot.OutboxMessage{To: channels.Address{Platform: "test", ChatID: m.chat}, Text: m.text}); err != nil {
			t.Fatal(err)
		}
	}
	out := &heldMarks{Outbox: db, release: make(chan struct{}), calls: make(chan []bot.Sent, 10)}
	ch := &limitedChannel{delivered: map[string][]string{}, at: map[string]time.Time{}} // no chat "slow": never limited
	sent := func() map[string][]string { d, _ := ch.snapshot(); return d }
	disp := bot.NewDispatcher(bot.DispatcherOptions{Outbox: out, Channels: map[string]channels.Channel{"test": ch},
		Owner: "t", Poll: 20 * time.Millisecond})
	done := make(chan struct{})
	go func() { disp.Run(ctx); close(done) }()
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(out.release) }) }
	defer func() { release(); cancel(); <-done }() // Run waits for the held marks

	select {
	case <-out.calls: // a1's mark (maybe with b1's) is being written, and held
	case <-time.After(10 * time.Second):
		t.Fatalf("no mark written; sent %v", sent())
	}
	bot.WaitUntil(t, "b1 is sent while a1's mark is held", func() bool { return len(sent()["b"]) == 1 })
	time.Sleep(100 * time.Millisecond) // room for a2 to go out early, were it to
	if a := sent()["a"]; !slices.Equal(a, []string{"a1"}) {
		t.Fatalf("chat a got %v while a1's mark was not written yet; want [a1]", a)
	}
	release()
	bot.WaitUntil(t, "a2 is sent once a1's mark is written", func() bool { return len(sent()["a"]) == 2 })
	if a := sent()["a"]; !slices.Equal(a, []string{"a1", "a2"}) {
		t.Errorf("chat a got %v; want [a1 a2], in order", a)
	}
}
