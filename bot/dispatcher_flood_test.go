package bot_test

import (
	"context"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/telegram"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// Telegram answers a chat 429 twice in a row: the adapter waits out the
// first and hands the second to the dispatcher, which must wait out the
// second's retry_after from when it came, not from when the send began.
// Telegram extends the ban of a bot that sends early.
func TestDispatcherWaitsOutTheLatestRetryAfter(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := pgtest.Open(t, ctx)
	fake := telegramtest.NewServer("777:flood-token")
	t.Cleanup(fake.Close)
	tg, err := telegram.New(telegram.Options{Token: "777:flood-token", APIURL: fake.URL(),
		Retry: channels.Retry{MaxRetries: 1}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	chats := []int64{101, 102, 103}
	for _, chat := range chats {
		fake.FloodChat(chat, 1, 1)
		to := channels.Address{Platform: "telegram", ChatID: strconv.FormatInt(chat, 10)}
		if _, err := db.Enqueue(ctx, bot.OutboxMessage{To: to, Text: "after the flood"}); err != nil {
			t.Fatal(err)
		}
	}
	disp := bot.NewDispatcher(bot.DispatcherOptions{Outbox: db, Channels: map[string]channels.Channel{"telegram": tg},
		Owner: "t", Poll: 20 * time.Millisecond})
	done := make(chan struct{})
	go func() { disp.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	for _, chat := range chats {
		wctx, wcancel := context.WithTimeout(ctx, 20*time.Second)
		_, err := fake.WaitMessages(wctx, chat, 1)
		wcancel()
		if err != nil {
			t.Fatalf("chat %d: no message after the flood: %v", chat, err)
		}
	}
	for _, chat := range chats {
		if early := fake.TooEarly(chat); len(early) > 0 {
			t.Errorf("chat %d was sent to %d time(s) before its latest retry_after had passed", chat, len(early))
		}
		if got := len(fake.Messages(chat)); got != 1 {
			t.Errorf("chat %d got %d messages, want 1", chat, got)
		}
	}
}
