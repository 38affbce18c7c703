package bot_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// A running dispatcher prunes rows delivered longer ago than its Keep and
// leaves the younger ones.
func TestDispatcherPrunesOldRows(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := pgtest.Open(t, ctx)
	enqueue := func(age string) int64 {
		t.Helper()
		id, err := db.Enqueue(ctx, bot.OutboxMessage{To: channels.Address{Platform: "test", ChatID: "1"}, Text: age})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Pool().Exec(ctx, `UPDATE outbox SET status = 'sent',
			created_at = now() - $2::interval, sent_at = now() - $2::interval WHERE id = $1`, id, age); err != nil {
			t.Fatal(err)
		}
		return id
	}
	old, young := enqueue("2 days"), enqueue("1 day")
	exists := func(id int64) bool {
		var n int
		if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM outbox WHERE id = $1`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}

	disp := bot.NewDispatcher(bot.DispatcherOptions{Outbox: db, Channels: map[string]channels.Channel{},
		Owner: "t", Keep: 36 * time.Hour})
	disp.SetPruneEveryForTest(20 * time.Millisecond)
	done := make(chan struct{})
	go func() { disp.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	bot.WaitUntil(t, "the row delivered 2 days ago is pruned", func() bool { return !exists(old) })
	if !exists(young) {
		t.Error("the row delivered a day ago was pruned; Keep is 36h")
	}
}

// Replicas try to prune at the same hour; the one holding the prune lock
// walks the outbox and the others skip it.
func TestPruneSkipsWhileAnotherReplicaPrunes(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	id, err := db.Enqueue(ctx, bot.OutboxMessage{To: channels.Address{Platform: "test", ChatID: "1"}, Text: "old"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool().Exec(ctx, `UPDATE outbox SET status = 'sent', created_at = now() - interval '8 days' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	disp := bot.NewDispatcher(bot.DispatcherOptions{Outbox: db, Channels: map[string]channels.Channel{}, Owner: "t"})

	other, led, err := db.TryLead(ctx, "outbox:prune") // another replica's pass
	if err != nil || !led {
		t.Fatalf("TryLead = %v, %v; want the lock", led, err)
	}
	if n, err := disp.PruneNowForTest(ctx); err != nil || n != 0 {
		t.Errorf("prune while another replica prunes = %d, %v; want 0, nil (skipped)", n, err)
	}
	if err := other.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := disp.PruneNowForTest(ctx); err != nil || n != 1 {
		t.Errorf("prune once the other is done = %d, %v; want 1, nil", n, err)
	}
	// The lock was given back: the next pass can take it again.
	again, led, err := db.TryLead(ctx, "outbox:prune")
	if err != nil || !led {
		t.Fatalf("after a pass, TryLead = %v, %v; want the lock free", led, err)
	}
	_ = again.Release(ctx)
}
