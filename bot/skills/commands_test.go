package skills

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/channels"
)

// adminHost is a bot.Host whose only admin is telegram:1.
type adminHost struct{}

// IsAdmin implements bot.Host.
func (adminHost) IsAdmin(identity string) bool { return identity == "telegram:1" }

// oneAgent answers every chat with agent main.
type oneAgent struct{}

// AgentAt implements Chats.
func (oneAgent) AgentAt(context.Context, channels.Address) string { return "main" }

// TestSkillsCommand: /skills lists source, shadowing and state; only
// admins disable and enable; an unknown name or a bad one changes nothing.
func TestSkillsCommand(t *testing.T) {
	ctx := context.Background()
	store := &memStore{published: []Published{{ID: 1, Name: "deploy", Description: "Published deploy", Version: 2},
		{ID: 2, Name: "reports", Description: "Writes reports", Version: 1}}}
	dir := skillsDir(t, "deploy")
	cat := NewCatalog(CatalogOptions{Dirs: NewDirs([]string{dir}, nil), Store: store})
	run := Commands(CommandOptions{Catalog: cat, Store: store, Chats: oneAgent{}})[0].Run
	say := func(user, args string) string {
		return run(ctx, adminHost{}, channels.Inbound{Platform: "telegram", UserID: user, ChatID: user}, args)
	}
	list := say("2", "")
	for _, want := range []string{"Skills of agent main:", "• deploy (dir ", " — shadows published v2: Does deploy", "• reports (published v1): Writes reports"} {
		if !strings.Contains(list, want) {
			t.Errorf("/skills lacks %q:\n%s", want, list)
		}
	}
	if got := say("2", "disable reports"); !strings.Contains(got, "Only admins") || len(store.disabled) != 0 {
		t.Fatalf("a non-admin's disable = %q (disabled %v)", got, store.disabled)
	}
	for args, want := range map[string]string{"disable nope": "There is no skill called nope", "disable ../x": "is not a skill name",
		"frobnicate": "Usage:", "disable": "Usage:"} {
		if got := say("1", args); !strings.Contains(got, want) || len(store.disabled) != 0 {
			t.Errorf("/skills %s = %q (disabled %v); want %q", args, got, store.disabled, want)
		}
	}
	if got := say("1", "disable reports"); !strings.Contains(got, "disabled for every agent") {
		t.Fatalf("disable = %q", got)
	}
	if got := say("1", "disable reports"); !strings.Contains(got, "was disabled already") {
		t.Fatalf("disable again = %q", got)
	}
	if got := say("2", ""); !strings.Contains(got, "reports (published v1) — disabled") {
		t.Fatalf("/skills after disable = %q", got)
	}
	if got := say("1", "enable reports"); !strings.Contains(got, "enabled again") || len(store.disabled) != 0 {
		t.Fatalf("enable = %q (disabled %v)", got, store.disabled)
	}
}
