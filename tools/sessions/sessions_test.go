package sessions_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
	"github.com/switchboard-chat/switchboard/tools"
	"github.com/switchboard-chat/switchboard/tools/sessions"
)

// TestSessionsToolsShowOnlyWhatTheCallerMaySee: a person sees the
// sessions of their own chat (and its threads); an admin sees all of the
// agent's; nobody sees another agent's.
func TestSessionsToolsShowOnlyWhatTheCallerMaySee(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	for _, s := range []string{"ops/telegram:1", "ops/telegram:1:7", "ops/telegram:2", "pal/telegram:1"} {
		if _, err := db.Append(ctx, s, agentcore.Message{Role: agentcore.RoleUser, Content: "hi from " + s}); err != nil {
			t.Fatal(err)
		}
	}
	set := sessions.NewTools(sessions.Options{Store: db, IsAdmin: func(id string) bool { return id == "telegram:99" }})
	run := func(tool int, user, chat string, args string) tools.Result {
		c := tools.Call{Channel: "telegram", ChatID: chat, UserID: user, Agent: "ops", Session: "ops/telegram:" + chat}
		return set[tool].Execute(tools.WithCall(ctx, c), json.RawMessage(args))
	}
	list := run(0, "telegram:5", "1", `{}`).ForLLM
	if !strings.Contains(list, "ops/telegram:1 ") || !strings.Contains(list, "ops/telegram:1:7") ||
		strings.Contains(list, "ops/telegram:2") || strings.Contains(list, "pal/") {
		t.Errorf("a person's list = %q", list)
	}
	if all := run(0, "telegram:99", "1", `{}`).ForLLM; !strings.Contains(all, "ops/telegram:2") || strings.Contains(all, "pal/") {
		t.Errorf("an admin's list = %q", all)
	}
	if h := run(1, "telegram:5", "1", `{"session":"ops/telegram:1:7"}`); h.IsError || !strings.Contains(h.ForLLM, "user: hi from ops/telegram:1:7") {
		t.Errorf("history of a thread of one's chat = %+v", h)
	}
	for _, other := range []string{"ops/telegram:2", "pal/telegram:1", "ops/telegram:10", "garbage"} {
		if h := run(1, "telegram:5", "1", `{"session":"`+other+`"}`); !h.IsError || !strings.Contains(h.ForLLM, "may not read") {
			t.Errorf("history of %s by a person of chat 1 = %+v", other, h)
		}
	}
	if h := run(1, "telegram:99", "1", `{"session":"pal/telegram:1"}`); !h.IsError {
		t.Errorf("an admin read another agent's session: %+v", h)
	}
}
