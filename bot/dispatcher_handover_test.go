package bot_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// gatedChannel holds its first send to chat "slow" until gate is closed,
// then answers it with a retry_after; every other send succeeds.
type gatedChannel struct {
	gate, entered chan struct{}
	once          sync.Once
	mu            sync.Mutex
	sent          []string
}

func (c *gatedChannel) Platform() string { return "test" }

func (c *gatedChannel) Start(ctx context.Context, _ channels.Handler) error {
	<-ctx.Done()
	return nil
}

func (c *gatedChannel) Send(_ context.Context, m channels.Outbound) (string, error) {
	first := false
	if m.To.ChatID == "slow" {
		c.once.Do(func() { first = true })
	}
	if first {
		close(c.entered)
		<-c.gate
		return "", &channels.RetryAfterError{After: time.Second}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sent = append(c.sent, m.Text)
	return m.Text, nil
}

func (c *gatedChannel) delivered() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.sent...)
}

// countingOutbox counts Claim calls.
type countingOutbox struct {
	*postgres.DB
	claims atomic.Int32
}

func (o *countingOutbox) Claim(ctx context.Context, owner string, limit int, lease time.Duration, beat bool) ([]bot.OutboxMessage, error) {
	o.claims.Add(1)
	return o.DB.Claim(ctx, owner, limit, lease, beat)
}

// Rows written already claimed go out without a Claim. A row of a chat
// whose earlier row waits for a retry waits behind it even when it was
// claimed before that row failed and handed over after: the chat keeps its
// order.
func TestDispatcherHandOverKeepsChatOrder(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := pgtest.Open(t, ctx)
	out := &countingOutbox{DB: db}
	ch := &gatedChannel{gate: make(chan struct{}), entered: make(chan struct{})}
	disp := bot.NewDispatcher(bot.DispatcherOptions{Outbox: out, Channels: map[string]channels.Channel{"test": ch},
		Owner: "t", Poll: time.Hour})
	done := make(chan struct{})
	go func() { disp.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	write := func(chat, text string) (bot.OutboxMessage, bool) {
		t.Helper()
		var claim bot.Claim
		bot.WaitUntil(t, "the dispatcher takes rows", func() bool {
			var ok bool
			claim, ok = disp.ReserveForTest()
			return ok
		})
		row, claimed, err := db.EnqueueClaimed(ctx, bot.OutboxMessage{To: channels.Address{Platform: "test", ChatID: chat}, Text: text}, claim)
		if err != nil {
			t.Fatal(err)
		}
		return row, claimed
	}
	f1, claimed := write("fast", "f1")
	disp.HandOverForTest(f1, claimed)
	bot.WaitUntil(t, "f1 is delivered", func() bool { return len(ch.delivered()) == 1 })
	if n := out.claims.Load(); n != 1 {
		t.Errorf("%d Claims; want only Run's first (the hand-over needs none)", n)
	}

	s1, claimed := write("slow", "s1")
	disp.HandOverForTest(s1, claimed)
	<-ch.entered
	// s2 is written (and claimed: s1 is still ours) while s1's send is under way…
	s2, claimed := write("slow", "s2")
	if !claimed {
		t.Fatal("s2 was not claimed although the chat's only pending row is this dispatcher's")
	}
	// …and handed over only after s1 failed and was released for its retry.
	close(ch.gate)
	bot.WaitUntil(t, "s1 is released for its retry", func() bool {
		var owner *string
		if err := db.Pool().QueryRow(ctx, `SELECT claimed_by FROM outbox WHERE id = $1`, s1.ID).Scan(&owner); err != nil {
			t.Fatal(err)
		}
		return owner == nil
	})
	disp.HandOverForTest(s2, true)
	bot.WaitUntil(t, "s1 and s2 are delivered", func() bool { return len(ch.delivered()) == 3 })
	if got := ch.delivered(); got[1] != "s1" || got[2] != "s2" {
		t.Fatalf("delivered %q; want s2 after s1", got)
	}
}
