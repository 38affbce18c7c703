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
	ctx := context.Background()
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
	disp := bot.NewDispatcher(bot.DispatcherOptions{Outbox: db, Channels: map[string]channels.Channel{},
		Owner: "t", Keep: 36 * time.Hour})
	disp.SetPruneEveryForTest(20 * time.Millisecond)
	pgtest.RunUntilPruned(t, db, "outbox", disp.Run, old, young, "delivered a day ago, and Keep is 36h")
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
	pgtest.CheckPruneTakesTurns(t, db, "outbox:prune", disp.PruneNowForTest, 1)
}
