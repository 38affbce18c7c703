package bot_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
)

// A feature's command answers like a built-in one, gets the Host to ask
// who is an admin, and /help lists it after the built-in commands; a name
// taken already is refused.
func TestRegisteredCommand(t *testing.T) {
	p := newPipeline(t, bot.Limits{}, bot.AccessOptions{Admins: []string{"test:boss"}})
	ctx := context.Background()
	ping := bot.Command{Name: "ping", Help: "answers pong", Run: func(_ context.Context, h bot.Host, in channels.Inbound, args string) string {
		if !h.IsAdmin(in.Identity()) {
			return "admins only"
		}
		return "pong " + args
	}}
	if err := p.router.Register(ping); err != nil {
		t.Fatal(err)
	}
	if err := p.router.Register(bot.Command{Name: "help", Help: "mine", Run: ping.Run}); err == nil {
		t.Error("registering /help again was accepted")
	}
	p.router.Handle(ctx, msg("c7", "boss", "/ping now"))
	p.router.Handle(ctx, msg("c7", "boss", "/help"))
	got := p.ch.WaitFor(t, "c7", 2)
	if got[0].Text != "pong now" {
		t.Errorf("/ping = %q", got[0].Text)
	}
	help := got[1].Text
	if !strings.Contains(help, "- /ping — answers pong") || strings.Index(help, "/ping") < strings.Index(help, "/tools") {
		t.Errorf("/help should list /ping after the built-in commands: %q", help)
	}
	if n := len(p.llm.Requests()); n != 0 {
		t.Fatalf("a registered command reached the model %d times", n)
	}
}
