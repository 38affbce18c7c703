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

// sendLog records the texts sent, in order.
type sendLog struct {
	mu   sync.Mutex
	sent []string
}

func (s *sendLog) Platform() string { return "test" }

func (s *sendLog) Start(ctx context.Context, _ channels.Handler) error {
	<-ctx.Done()
	return nil
}

func (s *sendLog) Send(_ context.Context, m channels.Outbound) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent = append(s.sent, m.Text)
	return m.Text, nil
}

func (s *sendLog) texts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.sent)
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
	ch := &sendLog{}
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
		t.Fatalf("no mark written; sent %v", ch.texts())
	}
	bot.WaitUntil(t, "b1 is sent while a1's mark is held", func() bool { return slices.Contains(ch.texts(), "b1") })
	time.Sleep(100 * time.Millisecond) // room for a2 to go out early, were it to
	if sent := ch.texts(); slices.Contains(sent, "a2") {
		t.Fatalf("a2 was sent while a1's mark was not written yet: %v", sent)
	}
	release()
	bot.WaitUntil(t, "a2 is sent once a1's mark is written", func() bool { return slices.Contains(ch.texts(), "a2") })
	if sent := ch.texts(); slices.Index(sent, "a1") > slices.Index(sent, "a2") {
		t.Errorf("chat a's rows went out of order: %v", sent)
	}
}
