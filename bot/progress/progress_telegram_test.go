package progress

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/telegram"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

// TestProgressOnTelegram: against the fake Bot API the note is sent, edited
// with the step and deleted, leaving the chat as it was.
func TestProgressOnTelegram(t *testing.T) {
	fake := telegramtest.NewServer("777:progress-token")
	t.Cleanup(fake.Close)
	tg, err := telegram.New(telegram.Options{Token: "777:progress-token", APIURL: fake.URL(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	p := Start(context.Background(), Options{To: channels.Address{Platform: "telegram", ChatID: "42"},
		Channel: tg, Log: slog.New(slog.DiscardHandler)})
	p.Step(toolCall("exec", `{"command":"ls <b>&"}`))
	waitUntil(t, "the note is sent", func() bool { return len(fake.Messages(42)) == 1 })
	p.Step(toolCall("datetime", `{}`))
	waitUntil(t, "the note shows the second step", func() bool {
		m := fake.Messages(42)
		return len(m) == 1 && strings.Contains(m[0].Visible, "datetime")
	})
	p.Stop(context.Background())
	if m := fake.Messages(42); len(m) != 0 {
		t.Errorf("messages left after Stop: %+v", m)
	}
	del := fake.Deleted(42)
	if len(del) != 1 || !strings.Contains(del[0].Visible, "exec ls <b>&") || del[0].Edits == 0 {
		t.Errorf("deleted = %+v, want the edited note", del)
	}
	if len(fake.ChatActions(42)) == 0 {
		t.Error("no typing during a 2 s run")
	}
}
