package postgres_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/storage/postgres"
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

	got, err := db.Unfinished(ctx, bot.UnfinishedQuery{OlderThan: 10 * time.Minute})
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
	all, err := db.Unfinished(ctx, bot.UnfinishedQuery{OlderThan: -time.Minute})
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

	// Looking only at sessions written to in the last half hour leaves
	// out those last written to an hour ago.
	if _, err := db.Pool().Exec(ctx, `UPDATE sessions SET updated_at = now() - interval '1 hour'
		WHERE key NOT IN ('a/1-user', 'a/3-final')`); err != nil {
		t.Fatal(err)
	}
	recent, err := db.Unfinished(ctx, bot.UnfinishedQuery{OlderThan: 10 * time.Minute, WrittenWithin: 30 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	wantRecent := []bot.Unfinished{want["a/1-user"], want["a/3-final"]}
	if !reflect.DeepEqual(recent, wantRecent) {
		t.Errorf("Unfinished(written within 30m) =\n %#v\nwant\n %#v", recent, wantRecent)
	}
}

// Recovery runs every second on every replica, so a pass must not read
// every message and outbox row: with 2 000 sessions of 10 messages (and
// the statistics of that), a pass over the sessions written to recently
// probes only those, and a full pass probes each session's newest message
// by its key. (A hash join of all messages with all sessions took ~200 ms
// per pass at 10 000 sessions.)
func TestUnfinishedReadsOnlyWhatItLooksAt(t *testing.T) {
	ctx := context.Background()
	db := pgtest.OpenWith(t, ctx, postgres.Options{MaxConns: 1})
	seedAnsweredSessions(t, db, 2000, 10)
	if _, err := db.Pool().Exec(ctx, `
		-- Two sessions written to a minute ago: one waits for a run, one
		-- has a reply that was never queued.
		UPDATE sessions SET updated_at = now() - interval '1 minute' WHERE key IN ('a/telegram:7', 'a/telegram:8');
		INSERT INTO messages (session_key, seq, role, content, external_id, created_at)
		VALUES ('a/telegram:7', 11, 'user', 'hi', '7-11', now() - interval '1 minute');
		UPDATE sessions SET last_seq = 11 WHERE key = 'a/telegram:7';
		DELETE FROM outbox WHERE session_key = 'a/telegram:8' AND source_seq = 10;
		ANALYZE sessions, messages, outbox`); err != nil {
		t.Fatal(err)
	}
	pass := func(q bot.UnfinishedQuery) (found []string, msgSeq, msgIdx, outSeq int64) {
		t.Helper()
		m0, o0 := readTableStats(t, db, "messages"), readTableStats(t, db, "outbox")
		got, err := db.Unfinished(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		m1, o1 := readTableStats(t, db, "messages"), readTableStats(t, db, "outbox")
		for _, u := range got {
			found = append(found, u.Session)
		}
		return found, m1.SeqScans - m0.SeqScans, m1.IdxScans - m0.IdxScans, o1.SeqScans - o0.SeqScans
	}

	found, msgSeq, msgIdx, outSeq := pass(bot.UnfinishedQuery{OlderThan: 3 * time.Second, WrittenWithin: 10 * time.Minute})
	if want := []string{"a/telegram:8", "a/telegram:7"}; !reflect.DeepEqual(found, want) {
		t.Errorf("recent pass found %q, want %q", found, want)
	}
	if msgSeq != 0 || outSeq != 0 || msgIdx > 2 {
		t.Errorf("recent pass: %d sequential scans of messages, %d of outbox, %d index scans of messages; want 0, 0, at most 2",
			msgSeq, outSeq, msgIdx)
	}

	found, msgSeq, _, outSeq = pass(bot.UnfinishedQuery{OlderThan: 3 * time.Second})
	if want := []string{"a/telegram:8", "a/telegram:7"}; !reflect.DeepEqual(found, want) {
		t.Errorf("full pass found %q, want %q", found, want)
	}
	if msgSeq != 0 || outSeq != 0 {
		t.Errorf("full pass: %d sequential scans of messages, %d of outbox; want a probe per session instead", msgSeq, outSeq)
	}
}

// seedAnsweredSessions stores n sessions of msgs messages each (msgs even:
// user and assistant in turn, every reply delivered), all last written to
// an hour ago.
func seedAnsweredSessions(tb testing.TB, db *postgres.DB, n, msgs int) {
	tb.Helper()
	for _, stmt := range []string{
		`INSERT INTO sessions (key, agent, scope, last_seq, updated_at)
		SELECT 'a/telegram:' || i, 'a', 'dm', $2, now() - interval '1 hour' FROM generate_series(1, $1::int) i`,
		`INSERT INTO messages (session_key, seq, role, content, external_id, created_at)
		SELECT 'a/telegram:' || i, s, CASE WHEN s % 2 = 1 THEN 'user' ELSE 'assistant' END, 'hello',
		       CASE WHEN s % 2 = 1 THEN i || '-' || s END, now() - interval '1 hour'
		FROM generate_series(1, $1::int) i, generate_series(1, $2::int) s`,
		`INSERT INTO outbox (session_key, source_seq, platform, chat_id, text, status)
		SELECT 'a/telegram:' || i, s, 'telegram', i::text, 'hello', 'sent'
		FROM generate_series(1, $1::int) i, generate_series(2, $2::int, 2) s`,
	} {
		if _, err := db.Pool().Exec(context.Background(), stmt, n, msgs); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkUnfinished times one recovery pass (RunRecovery makes one a
// second on every replica) over 10 000 sessions of 20 messages, none of
// them unfinished: "just" looks at the sessions written to in the last
// RecoverJustWritten and "recent" in the last RecoverWrittenWithin (none
// here), "full" at all of them.
func BenchmarkUnfinished(b *testing.B) {
	ctx := context.Background()
	db := pgtest.OpenWith(b, ctx, postgres.Options{MaxConns: 1})
	seedAnsweredSessions(b, db, 10_000, 20)
	if _, err := db.Pool().Exec(ctx, `ANALYZE sessions, messages, outbox`); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		q    bot.UnfinishedQuery
	}{
		{"just", bot.UnfinishedQuery{OlderThan: bot.RecoverOlderThan, WrittenWithin: bot.RecoverJustWritten}},
		{"recent", bot.UnfinishedQuery{OlderThan: bot.RecoverOlderThan, WrittenWithin: bot.RecoverWrittenWithin}},
		{"full", bot.UnfinishedQuery{OlderThan: bot.RecoverOlderThan}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				got, err := db.Unfinished(ctx, c.q)
				if err != nil || len(got) != 0 {
					b.Fatalf("Unfinished = %d sessions, %v; want none", len(got), err)
				}
			}
		})
	}
}
