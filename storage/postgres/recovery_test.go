package postgres_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

func TestUnfinished(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	user := agentcore.Message{Role: agentcore.RoleUser, Content: "hi"}
	final := agentcore.Message{Role: agentcore.RoleAssistant, Content: "done!"}
	calling := agentcore.Message{Role: agentcore.RoleAssistant, ToolCalls: []agentcore.ToolCall{
		{ID: "c1", Name: "exec", Arguments: json.RawMessage(`{}`)}}}
	tool := agentcore.Message{Role: agentcore.RoleTool, Content: "ok", ToolCallID: "c1", ToolName: "exec"}

	appendAll := func(s string, msgs ...agentcore.Message) {
		t.Helper()
		if _, err := db.Append(ctx, s, msgs...); err != nil {
			t.Fatal(err)
		}
	}
	appendAll("a/1-user", final, user)            // waits for a run
	appendAll("a/2-tool", user, calling, tool)    // waits for a run
	appendAll("a/3-final", user, final)           // reply never enqueued
	appendAll("a/4-delivered", user, final)       // reply enqueued: done
	appendAll("a/5-calling", user, calling)       // tool calls without results: resume
	appendAll("a/6-recent", user)                 // too recent: maybe running elsewhere
	appendAll("a/7-old-reply", user, final, user) // an outbox row for an older seq does not count
	// Replies never sent, so never undelivered: a note for the agent, a
	// silent reply, a teammate's reply (but its unanswered mail needs a run).
	appendAll("a/8-note", user, final, agentcore.Message{Role: agentcore.RoleAssistant, Content: "[Handoff] note", ExternalID: "handoff-note:1"})
	appendAll("a/9-silent", user, agentcore.Message{Role: agentcore.RoleAssistant, Content: " " + bot.SilentReply + "\n"})
	appendAll("dev/team:eng:telegram:1", user, final)
	appendAll("qa/team:eng:telegram:1", final, user)

	if _, err := db.Enqueue(ctx, bot.OutboxMessage{Session: "a/4-delivered", SourceSeq: 2, Text: "done!"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Enqueue(ctx, bot.OutboxMessage{Session: "a/7-old-reply", SourceSeq: 2, Text: "done!"}); err != nil {
		t.Fatal(err)
	}
	// Everything but a/6-recent happened an hour ago.
	if _, err := db.Pool().Exec(ctx, `UPDATE messages SET created_at = now() - interval '1 hour'
		WHERE session_key <> 'a/6-recent'`); err != nil {
		t.Fatal(err)
	}

	got, err := db.Unfinished(ctx, 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bot.Unfinished{
		"a/1-user":               {Session: "a/1-user", LastSeq: 2, NeedsRun: true},
		"a/2-tool":               {Session: "a/2-tool", LastSeq: 3, NeedsRun: true},
		"a/3-final":              {Session: "a/3-final", LastSeq: 2, Content: "done!"},
		"a/5-calling":            {Session: "a/5-calling", LastSeq: 2, NeedsRun: true},
		"a/7-old-reply":          {Session: "a/7-old-reply", LastSeq: 3, NeedsRun: true},
		"qa/team:eng:telegram:1": {Session: "qa/team:eng:telegram:1", LastSeq: 2, NeedsRun: true},
	}
	gotMap := map[string]bot.Unfinished{}
	for _, u := range got {
		gotMap[u.Session] = u
	}
	if len(got) != len(gotMap) || !reflect.DeepEqual(gotMap, want) {
		t.Errorf("Unfinished =\n %#v\nwant\n %#v", got, want)
	}

	// With no age limit the recent session shows up too.
	all, err := db.Unfinished(ctx, -time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, u := range all {
		found = found || u.Session == "a/6-recent"
	}
	if !found {
		t.Errorf("Unfinished(-1m) = %#v, want a/6-recent included", all)
	}
}

// TestUndelivered: a final reply stored but never queued is found even
// when later messages followed it; queued replies and tool-calling steps
// are not.
func TestUndelivered(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	const s = "a/telegram:1"
	msg := func(role agentcore.Role, content string) agentcore.Message {
		return agentcore.Message{Role: role, Content: content}
	}
	calling := agentcore.Message{Role: agentcore.RoleAssistant, ToolCalls: []agentcore.ToolCall{
		{ID: "c1", Name: "exec", Arguments: json.RawMessage(`{}`)}}}
	tool := agentcore.Message{Role: agentcore.RoleTool, Content: "ok", ToolCallID: "c1", ToolName: "exec"}
	if _, err := db.Append(ctx, s,
		msg(agentcore.RoleUser, "one"), msg(agentcore.RoleAssistant, "first reply"), // 1, 2: queued
		msg(agentcore.RoleUser, "two"), calling, tool, msg(agentcore.RoleAssistant, "orphan"), // 3-6: 6 never queued
		msg(agentcore.RoleUser, "three"), msg(agentcore.RoleAssistant, "last reply"), // 7, 8: queued
		msg(agentcore.RoleUser, "four"), // 9: waits for a run
	); err != nil {
		t.Fatal(err)
	}
	for _, seq := range []int64{2, 8} {
		if _, err := db.Enqueue(ctx, bot.OutboxMessage{Session: s, SourceSeq: seq, Text: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := db.Undelivered(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	want := []bot.Unfinished{{Session: s, LastSeq: 6, Content: "orphan"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Undelivered = %+v, want %+v", got, want)
	}
	if got, err := db.Undelivered(ctx, "a/none"); err != nil || len(got) != 0 {
		t.Fatalf("Undelivered of an unknown session = %+v, %v", got, err)
	}
}
