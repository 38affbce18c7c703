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
