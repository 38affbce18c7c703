package postgres_test

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot/media"
	"github.com/switchboard-chat/switchboard/bot/retention"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

func user(text string) agentcore.Message {
	return agentcore.Message{Role: agentcore.RoleUser, Content: text}
}
func answer(text string) agentcore.Message {
	return agentcore.Message{Role: agentcore.RoleAssistant, Content: text}
}
func toolCall(id string) agentcore.Message {
	return agentcore.Message{Role: agentcore.RoleAssistant, ToolCalls: []agentcore.ToolCall{
		{ID: id, Name: "exec", Arguments: json.RawMessage(`{}`)}}}
}
func toolResult(id string) agentcore.Message {
	return agentcore.Message{Role: agentcore.RoleTool, Content: "ok", ToolCallID: id, ToolName: "exec"}
}

// contents lists what Load shows of session, a message per word: its
// content, or "call:<id>" / "result:<id>".
func contents(t *testing.T, db *postgres.DB, session string) []string {
	t.Helper()
	msgs, err := db.Load(context.Background(), session, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, m := range msgs {
		switch {
		case len(m.ToolCalls) > 0:
			out = append(out, "call:"+m.ToolCalls[0].ID)
		case m.Role == agentcore.RoleTool:
			out = append(out, "result:"+m.ToolCallID)
		default:
			out = append(out, m.Content)
		}
	}
	return out
}

func appendAll(t *testing.T, db *postgres.DB, session string, msgs ...agentcore.Message) {
	t.Helper()
	if _, err := db.Append(context.Background(), session, msgs...); err != nil {
		t.Fatal(err)
	}
}

func wantContents(t *testing.T, db *postgres.DB, session string, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if got := contents(t, db, session); !reflect.DeepEqual(got, want) {
		t.Errorf("%s shows %q, want %q", session, got, want)
	}
}

func TestResetHidesFinishedTurnsAndKeepsTheStepInFlight(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	s := agentcore.SessionKey{Agent: "helper", Scope: "telegram:42"}.String()
	other := agentcore.SessionKey{Agent: "helper", Scope: "telegram:43"}.String()
	appendAll(t, db, s, user("u1"), answer("a1"), user("u2"), toolCall("c1"))
	appendAll(t, db, other, user("x1"), answer("y1"))

	// Mid tool step: the turn in flight stays whole in view.
	if n, err := db.ResetScope(ctx, "telegram:42", "telegram:1"); err != nil || n != 1 {
		t.Fatalf("ResetScope = %d, %v; want 1 session", n, err)
	}
	wantContents(t, db, s, "u2", "call:c1")
	appendAll(t, db, s, toolResult("c1"), answer("a2"))
	wantContents(t, db, s, "u2", "call:c1", "result:c1", "a2")

	// Idle: everything goes out of view, and is still stored.
	if _, err := db.ResetScope(ctx, "telegram:42", "telegram:1"); err != nil {
		t.Fatal(err)
	}
	wantContents(t, db, s)
	appendAll(t, db, s, user("u3"))
	wantContents(t, db, s, "u3")
	if got, err := db.Load(ctx, s, 1); err != nil || len(got) != 1 || got[0].Content != "u3" || got[0].Seq != 7 {
		t.Errorf("Load(limit 1) = %+v, %v; want u3 at seq 7", got, err)
	}
	var stored int
	if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM messages WHERE session_key = $1`, s).Scan(&stored); err != nil || stored != 7 {
		t.Errorf("stored messages = %d, %v; want all 7 kept", stored, err)
	}
	wantContents(t, db, other, "x1", "y1")

	// A reset where nothing was answered yet hides nothing.
	fresh := agentcore.SessionKey{Agent: "helper", Scope: "telegram:44"}.String()
	appendAll(t, db, fresh, user("hello"))
	if _, err := db.ResetScope(ctx, "telegram:44", "telegram:1"); err != nil {
		t.Fatal(err)
	}
	wantContents(t, db, fresh, "hello")

	entries, err := db.Audit(ctx, 5)
	if err != nil || len(entries) == 0 || entries[0].Action != postgres.ActionSessionReset || entries[0].SubjectID != "telegram:44" || entries[0].Actor != "telegram:1" {
		t.Errorf("newest audit entry = %+v, %v; want the reset", entries, err)
	}
}

// age makes every message of session older than d.
func age(t *testing.T, db *postgres.DB, session string, d time.Duration) {
	t.Helper()
	ctx := context.Background()
	if _, err := db.Pool().Exec(ctx, `UPDATE messages SET created_at = now() - $2::interval WHERE session_key = $1`, session, d.String()); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool().Exec(ctx, `UPDATE sessions SET created_at = now() - $2::interval WHERE key = $1`, session, d.String()); err != nil {
		t.Fatal(err)
	}
}

func TestPruneMessagesCutsOnlyBetweenTurns(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	long := agentcore.SessionKey{Agent: "helper", Scope: "telegram:1"}.String()
	appendAll(t, db, long,
		user("u1"), toolCall("c1"), toolResult("c1"), toolCall("c2"), toolResult("c2"), answer("a1"),
		user("u2"), answer("a2"),
		user("u3"), toolCall("c3"), toolResult("c3"), answer("a3"),
		user("u4"), answer("a4"))
	live := agentcore.SessionKey{Agent: "helper", Scope: "telegram:2"}.String()
	appendAll(t, db, live, user("v1"), answer("b1"), user("v2"), toolCall("d1"))
	idle := agentcore.SessionKey{Agent: "helper", Scope: "telegram:3"}.String()
	appendAll(t, db, idle, user("w1"), answer("e1"))
	young := agentcore.SessionKey{Agent: "helper", Scope: "telegram:4"}.String()
	appendAll(t, db, young, user("z1"), answer("f1"), user("z2"), answer("f2"))
	for _, s := range []string{long, live, idle} {
		age(t, db, s, 48*time.Hour)
	}

	// A page of 2 messages is shorter than the first turn (6): that turn
	// goes whole, then the next pages take a turn each.
	n, err := db.PruneMessages(ctx, time.Now().Add(-24*time.Hour), 2)
	if err != nil {
		t.Fatal(err)
	}
	if n != 12+2 {
		t.Errorf("pruned %d messages, want 14", n)
	}
	wantContents(t, db, long, "u4", "a4")              // the newest turn stays
	wantContents(t, db, live, "v2", "call:d1")         // the step in flight stays whole
	wantContents(t, db, idle, "w1", "e1")              // the newest message is never pruned
	wantContents(t, db, young, "z1", "f1", "z2", "f2") // younger than retention

	if n, err := db.PruneMessages(ctx, time.Now().Add(-24*time.Hour), 2); err != nil || n != 0 {
		t.Errorf("second pass = %d, %v; want nothing left to prune", n, err)
	}
	// ask_user's questions: an old answered one goes, an old one still
	// waiting and a young answered one stay.
	if _, err := db.Pool().Exec(ctx, `INSERT INTO questions (id, session_key, tool_call_id, asker, platform, chat_id, question, status, created_at, expires_at)
		VALUES ('old', $1, 'q1', 'telegram:1', 'telegram', '1', 'which?', 'answered', now() - interval '48 hours', now()),
		       ('waiting', $1, 'q2', 'telegram:1', 'telegram', '1', 'which?', 'pending', now() - interval '48 hours', now() + interval '1 hour'),
		       ('young', $1, 'q3', 'telegram:1', 'telegram', '1', 'which?', 'answered', now(), now())`, long); err != nil {
		t.Fatal(err)
	}
	if _, err := db.PruneMessages(ctx, time.Now().Add(-24*time.Hour), 2); err != nil {
		t.Fatal(err)
	}
	if got := questionIDs(t, db); !slices.Equal(got, []string{"waiting", "young"}) {
		t.Errorf("questions after pruning = %q, want [waiting young]", got)
	}
	// New messages follow the old numbering.
	if last, err := db.Append(ctx, long, user("u5")); err != nil || last != 15 {
		t.Errorf("Append after pruning = %d, %v; want seq 15", last, err)
	}
}

func TestPruneAuditInPages(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	if _, err := db.Pool().Exec(ctx, `INSERT INTO audit_log (at, actor, action)
		SELECT now() - interval '400 days', 'telegram:1', 'old.' || i FROM generate_series(1, 5) i`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool().Exec(ctx, `INSERT INTO audit_log (actor, action) VALUES ('telegram:1', 'new')`); err != nil {
		t.Fatal(err)
	}
	if n, err := db.PruneAudit(ctx, time.Now().Add(-365*24*time.Hour), 2); err != nil || n != 5 {
		t.Fatalf("PruneAudit = %d, %v; want 5", n, err)
	}
	entries, err := db.Audit(ctx, 10)
	if err != nil || len(entries) != 1 || entries[0].Action != "new" {
		t.Errorf("audit log after pruning = %+v, %v; want only the new entry", entries, err)
	}
}

func TestForgetChatDeletesItsHistoryMemoryAndAttachments(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	mine := putMedia(t, db, "only in this chat")
	shared := putMedia(t, db, "sent to both chats")
	// Documents and voice notes are found by their link to the chat, not
	// by a message's pictures.
	document := putChatMedia(t, db, "a report sent here", "telegram:42")
	both := putChatMedia(t, db, "a file sent in both chats", "telegram:42")
	putChatMedia(t, db, "a file sent in both chats", "telegram:420")
	picture := func(text string, s ...string) agentcore.Message {
		m := user(text)
		for _, sha := range s {
			m.Images = append(m.Images, agentcore.Image{SHA256: sha, Type: "image/png"})
		}
		return m
	}
	main := agentcore.SessionKey{Agent: "helper", Scope: "telegram:42"}.String()
	thread := agentcore.SessionKey{Agent: "ops", Scope: "telegram:42:7"}.String()
	team := agentcore.SessionKey{Agent: "mate", Scope: "team:crew:telegram:42"}.String()
	sub := agentcore.SessionKey{Agent: "helper", Scope: "sub:s1:" + main}.String()
	neighbour := agentcore.SessionKey{Agent: "helper", Scope: "telegram:420"}.String()
	appendAll(t, db, main, picture("look", mine.SHA256, shared.SHA256), answer("nice"))
	appendAll(t, db, thread, user("t1"))
	appendAll(t, db, team, user("m1"))
	appendAll(t, db, sub, user("s1"))
	appendAll(t, db, neighbour, picture("same", shared.SHA256))
	if _, err := db.ResetScope(ctx, "telegram:42", "telegram:1"); err != nil {
		t.Fatal(err)
	}
	for _, scope := range []string{"chat:telegram:42", "chat:telegram:42:7", "chat:telegram:420", "user:telegram:1"} {
		if _, err := db.Pool().Exec(ctx, `INSERT INTO agent_docs (agent, scope, path, content) VALUES ('helper', $1, 'MEMORY.md', 'x')`, scope); err != nil {
			t.Fatal(err)
		}
	}

	if _, err := db.Pool().Exec(ctx, `INSERT INTO questions (id, session_key, tool_call_id, asker, platform, chat_id, question, answer, status, expires_at)
		VALUES ('here', $1, 'q1', 'telegram:1', 'telegram', '42', 'which?', 'the secret plan', 'answered', now()),
		       ('there', $2, 'q1', 'telegram:1', 'telegram', '420', 'which?', 'other', 'answered', now())`, main, neighbour); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool().Exec(ctx, `INSERT INTO outbox (platform, chat_id, text, status) VALUES
		('telegram', '42', 'nice', 'sent'), ('telegram', '42', 'on its way', 'pending'), ('telegram', '420', 'other', 'sent')`); err != nil {
		t.Fatal(err)
	}
	want := retention.Footprint{Sessions: 4, Messages: 5, Memory: 2, Attachments: 2}
	if f, err := db.ChatFootprint(ctx, "telegram:42"); err != nil || f != want {
		t.Fatalf("ChatFootprint = %+v, %v; want %+v", f, err, want)
	}
	f, sessions, err := db.ForgetChat(ctx, "telegram:42", "telegram:1")
	if err != nil || f != want {
		t.Fatalf("ForgetChat = %+v, %v; want %+v", f, err, want)
	}
	slices.Sort(sessions)
	if wantSessions := []string{"helper/sub:s1:helper/telegram:42", "helper/telegram:42", "mate/team:crew:telegram:42", "ops/telegram:42:7"}; !slices.Equal(sessions, wantSessions) {
		t.Errorf("sessions = %q, want %q", sessions, wantSessions)
	}
	var stored int
	if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM messages WHERE session_key = ANY($1)`,
		[]string{main, thread, team, sub}).Scan(&stored); err != nil || stored != 0 {
		t.Errorf("messages left = %d, %v; want none", stored, err)
	}
	wantContents(t, db, neighbour, "same")
	if got := questionIDs(t, db); !slices.Equal(got, []string{"there"}) {
		t.Errorf("questions after forgetting = %q, want only the other chat's", got)
	}
	var docs []string
	rows, _ := db.Pool().Query(ctx, `SELECT scope FROM agent_docs ORDER BY scope`)
	for rows.Next() {
		var s string
		_ = rows.Scan(&s)
		docs = append(docs, s)
	}
	if !reflect.DeepEqual(docs, []string{"chat:telegram:420", "user:telegram:1"}) {
		t.Errorf("documents left = %q; want the other chat's and the person's", docs)
	}
	if _, _, err := db.OpenMedia(ctx, mine.SHA256); err == nil {
		t.Error("the chat's own attachment is still stored")
	}
	if _, _, err := db.OpenMedia(ctx, document.SHA256); err == nil {
		t.Error("the document sent in the chat is still stored")
	}
	for _, kept := range []media.Stored{shared, both} {
		if r, _, err := db.OpenMedia(ctx, kept.SHA256); err != nil {
			t.Errorf("the attachment another chat shows or links was deleted: %v", err)
		} else {
			r.Close()
		}
	}
	var links []string
	lrows, _ := db.Pool().Query(ctx, `SELECT chat FROM media_chats ORDER BY chat`)
	for lrows.Next() {
		var c string
		_ = lrows.Scan(&c)
		links = append(links, c)
	}
	if !slices.Equal(links, []string{"telegram:420"}) {
		t.Errorf("media links left = %q; want only the other chat's", links)
	}
	// The sessions keep their numbering: a new reply is not mistaken for
	// one already sent.
	if last, err := db.Append(ctx, main, user("again")); err != nil || last != 3 {
		t.Errorf("Append after forget = %d, %v; want seq 3", last, err)
	}
	wantContents(t, db, main, "again")
	var replies int
	if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM outbox WHERE chat_id IN ('42', '420')`).Scan(&replies); err != nil || replies != 2 {
		t.Errorf("outbox rows left = %d, %v; want the pending one and the other chat's", replies, err)
	}
	entries, err := db.Audit(ctx, 1)
	if err != nil || len(entries) != 1 || entries[0].Action != postgres.ActionChatForgotten ||
		entries[0].Detail["messages"] != float64(5) || entries[0].Detail["replies"] != float64(1) {
		t.Errorf("newest audit entry = %+v, %v; want the forget with its counts", entries, err)
	}
	if f, err := db.ChatFootprint(ctx, "telegram:42"); err != nil || f.Messages != 1 || f.Memory != 0 || f.Attachments != 0 {
		t.Errorf("footprint after forget = %+v, %v", f, err)
	}
}

// questionIDs lists the ids of the stored questions, sorted.
func questionIDs(t *testing.T, db *postgres.DB) []string {
	t.Helper()
	rows, err := db.Pool().Query(context.Background(), `SELECT id FROM questions ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return ids
}
