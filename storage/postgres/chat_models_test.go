package postgres_test

import (
	"context"
	"testing"

	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// TestChatModels: a chat has no model until switched; a switch replaces
// the previous one, is audited, and "" goes back to the default; other
// chats are not touched.
func TestChatModels(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	get := func(chat string) string {
		t.Helper()
		name, err := db.ChatModel(ctx, chat)
		if err != nil {
			t.Fatal(err)
		}
		return name
	}
	if got := get("telegram:1"); got != "" {
		t.Fatalf("fresh chat model = %q", got)
	}
	for _, name := range []string{"fast", "smart"} {
		if err := db.SetChatModel(ctx, "telegram:1", name, "telegram:9"); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.SetChatModel(ctx, "telegram:2", "fast", "telegram:9"); err != nil {
		t.Fatal(err)
	}
	if got := get("telegram:1"); got != "smart" {
		t.Errorf("chat model = %q, want smart", got)
	}
	if err := db.SetChatModel(ctx, "telegram:1", "", "telegram:9"); err != nil {
		t.Fatal(err)
	}
	if got, other := get("telegram:1"), get("telegram:2"); got != "" || other != "fast" {
		t.Errorf("after default: chat 1 = %q, chat 2 = %q", got, other)
	}
	entries, err := db.Audit(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	var switches []string
	for _, e := range entries {
		if e.Action == postgres.ActionModelSwitched && e.SubjectID == "telegram:1" && e.Actor == "telegram:9" {
			switches = append(switches, e.Detail["model"].(string))
		}
	}
	if len(switches) != 3 || switches[0] != "default" || switches[2] != "fast" {
		t.Errorf("audited switches (newest first) = %v", switches)
	}
}
