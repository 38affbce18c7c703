package progress

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/slack"
	"github.com/switchboard-chat/switchboard/channels/slack/slacktest"
)

// TestProgressOnSlack: Slack has no typing indicator for bots, so a run
// that goes on shows the "working…" note instead, edited with each step and
// deleted at the end.
func TestProgressOnSlack(t *testing.T) {
	fake := slacktest.NewServer("xoxb-progress", "xapp-progress")
	t.Cleanup(fake.Close)
	sl, err := slack.New(slack.Options{BotToken: "xoxb-progress", AppToken: "xapp-progress", APIURL: fake.URL(),
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	p := Start(context.Background(), Options{To: channels.Address{Platform: "slack", ChatID: "C0GEN"},
		Channel: sl, Log: slog.New(slog.DiscardHandler)})
	p.Step(toolCall("exec", `{"command":"git pull"}`))
	waitUntil(t, "the note is posted", func() bool { return len(fake.Posted("C0GEN", "chat.postMessage")) == 1 })
	if got := fake.Posted("C0GEN", "chat.postMessage")[0].Text; !strings.Contains(got, progressNote) {
		t.Errorf("note = %q, want the working note", got)
	}
	p.Step(toolCall("datetime", `{}`))
	waitUntil(t, "the note shows the second step", func() bool {
		for _, m := range fake.Posted("C0GEN", "chat.update") {
			if strings.Contains(m.Text, "datetime") {
				return true
			}
		}
		return false
	})
	p.Stop(context.Background())
	if got := fake.Posted("C0GEN", "chat.delete"); len(got) != 1 {
		t.Errorf("note deleted %d times, want once", len(got))
	}
}
