package bot_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// limitedChannel answers the first send to chat "slow" with a 429 and
// records when each message was delivered.
type limitedChannel struct {
	retryAfter time.Duration
	// stall, when set, makes the first send to "slow" wait this long inside
	// Send (as adapters wait out short rate limits) and then succeed.
	stall     time.Duration
	mu        sync.Mutex
	limited   bool
	delivered map[string][]string // chat → texts in order
	at        map[string]time.Time
}

func (c *limitedChannel) Platform() string { return "test" }

func (c *limitedChannel) Start(ctx context.Context, _ channels.Handler) error {
	<-ctx.Done()
	return nil
}

func (c *limitedChannel) Send(_ context.Context, m channels.Outbound) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m.To.ChatID == "slow" && !c.limited {
		c.limited = true
		if c.stall > 0 {
			c.mu.Unlock()
			time.Sleep(c.stall)
			c.mu.Lock()
		} else {
			return "", &channels.RetryAfterError{After: c.retryAfter}
		}
	}
	c.delivered[m.To.ChatID] = append(c.delivered[m.To.ChatID], m.Text)
	c.at[m.Text] = time.Now()
	return m.Text, nil
}

func (c *limitedChannel) snapshot() (map[string][]string, map[string]time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, at := map[string][]string{}, map[string]time.Time{}
	for k, v := range c.delivered {
		d[k] = append([]string(nil), v...)
	}
	for k, v := range c.at {
		at[k] = v
	}
	return d, at
}

// A chat the platform rate-limits waits out its retry_after alone: another
// chat's messages, queued after it, go out at once, and the limited chat's
// messages follow later, once each and in order.
func TestDispatcherRateLimitedChatDelaysNoOther(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := pgtest.Open(t, ctx)
	ch := &limitedChannel{retryAfter: 2 * time.Second, delivered: map[string][]string{}, at: map[string]time.Time{}}
	for _, m := range []struct{ chat, text string }{{"slow", "s1"}, {"slow", "s2"}, {"fast", "f1"}, {"fast", "f2"}} {
		if _, err := db.Enqueue(ctx, bot.OutboxMessage{To: channels.Address{Platform: "test", ChatID: m.chat}, Text: m.text}); err != nil {
			t.Fatal(err)
		}
	}
	disp := bot.NewDispatcher(bot.DispatcherOptions{Outbox: db, Channels: map[string]channels.Channel{"test": ch},
		Owner: "t", Poll: 20 * time.Millisecond})
	start := time.Now()
	done := make(chan struct{})
	go func() { disp.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	deadline := time.Now().Add(20 * time.Second)
	for {
		d, _ := ch.snapshot()
		if len(d["slow"]) == 2 && len(d["fast"]) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivered %v", d)
		}
		time.Sleep(10 * time.Millisecond)
	}
	d, at := ch.snapshot()
	if d["slow"][0] != "s1" || d["slow"][1] != "s2" || d["fast"][0] != "f1" || d["fast"][1] != "f2" {
		t.Fatalf("order within a chat broken: %v", d)
	}
	if !at["f2"].Before(at["s1"]) {
		t.Fatalf("the fast chat waited for the rate-limited one: f2 at %s, s1 at %s",
			at["f2"].Sub(start), at["s1"].Sub(start))
	}
	if at["s1"].Sub(start) < ch.retryAfter {
		t.Fatalf("the limited chat did not wait out retry_after: s1 after %s", at["s1"].Sub(start))
	}
	t.Logf("unlimited chat delivered %s after start; limited chat %s (retry_after %s)",
		at["f2"].Sub(start), at["s1"].Sub(start), ch.retryAfter)
}

// A send that waits inside the adapter (a short rate limit waited out) does
// not hold up rows claimed after it for other chats.
func TestDispatcherSlowSendDelaysNoOther(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := pgtest.Open(t, ctx)
	ch := &limitedChannel{stall: 2 * time.Second, delivered: map[string][]string{}, at: map[string]time.Time{}}
	enqueue := func(chat, text string) {
		if _, err := db.Enqueue(ctx, bot.OutboxMessage{To: channels.Address{Platform: "test", ChatID: chat}, Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	enqueue("slow", "s1")
	disp := bot.NewDispatcher(bot.DispatcherOptions{Outbox: db, Channels: map[string]channels.Channel{"test": ch},
		Owner: "t", Poll: 20 * time.Millisecond})
	done := make(chan struct{})
	go func() { disp.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	time.Sleep(200 * time.Millisecond) // s1 is being sent now
	enqueue("fast", "f1")
	queued := time.Now()
	disp.Nudge()
	deadline := time.Now().Add(20 * time.Second)
	for {
		d, at := ch.snapshot()
		if len(d["slow"]) == 1 && len(d["fast"]) == 1 {
			if !at["f1"].Before(at["s1"]) {
				t.Fatalf("f1 waited for the slow send: f1 %s after queueing, s1 done %s after it",
					at["f1"].Sub(queued), at["s1"].Sub(queued))
			}
			t.Logf("f1 delivered %s after it was queued, while another chat's send took %s", at["f1"].Sub(queued), ch.stall)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivered %v", d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
