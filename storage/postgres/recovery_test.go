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

	// Looking only at the last half hour leaves out sessions nothing
	// happened to since an hour ago: a/1-user and a/3-final stored their
	// newest message 20 and 15 minutes ago, and a/2-tool's approval, asked an
	// hour ago, was decided 12 minutes ago (a crash before the run resumed).
	if _, err := db.Pool().Exec(ctx, `
		UPDATE messages SET created_at = now() - interval '20 minutes' WHERE session_key = 'a/1-user' AND seq = 2;
		UPDATE messages SET created_at = now() - interval '15 minutes' WHERE session_key = 'a/3-final' AND seq = 2;
		INSERT INTO approvals (id, tool, session_key, tool_call_id, status, created_at, expires_at, decided_at)
		VALUES ('ap1', 'exec', 'a/2-tool', 'c1', 'allowed_once', now() - interval '1 hour', now(), now() - interval '12 minutes')`); err != nil {
		t.Fatal(err)
	}
	recent, err := db.Unfinished(ctx, bot.UnfinishedQuery{OlderThan: 10 * time.Minute, WrittenWithin: 30 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	wantRecent := []bot.Unfinished{want["a/2-tool"], want["a/1-user"], want["a/3-final"]} // oldest newest message first
	// What happened more recently than OlderThan waits for a later pass.
	if _, err := db.Pool().Exec(ctx, `UPDATE messages SET created_at = now() - interval '5 minutes' WHERE session_key = 'a/1-user' AND seq = 2`); err != nil {
		t.Fatal(err)
	}
	soon, err := db.Unfinished(ctx, bot.UnfinishedQuery{OlderThan: 10 * time.Minute, WrittenWithin: 30 * time.Minute})
	if err != nil || len(soon) != 2 || soon[0].Session != "a/2-tool" || soon[1].Session != "a/3-final" {
		t.Errorf("Unfinished with a/1-user written 5 minutes ago = %+v, %v; want a/2-tool and a/3-final only", soon, err)
	}
	if _, err := db.Pool().Exec(ctx, `UPDATE messages SET created_at = now() - interval '20 minutes' WHERE session_key = 'a/1-user' AND seq = 2`); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(recent, wantRecent) {
		t.Errorf("Unfinished(active within 30m) =\n %#v\nwant\n %#v", recent, wantRecent)
	}

	// A pass over every session goes in key order from After.
	page, err := db.Unfinished(ctx, bot.UnfinishedQuery{OlderThan: 10 * time.Minute, After: "a/3-final"})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, u := range page {
		keys = append(keys, u.Session)
	}
	if wantKeys := []string{"a/5-calling", "a/7-old-reply", "qa/team:eng:telegram:1"}; !reflect.DeepEqual(keys, wantKeys) {
		t.Errorf("Unfinished(after a/3-final) = %q, want %q", keys, wantKeys)
	}
}

// Recovery runs every second on every replica, so a pass must not read
// every session, message and outbox row: with 2 000 sessions of 10
// messages (and the statistics of that), a pass over the sessions active
// recently finds them by time and probes only those, and a full pass probes
// each session's newest message by its key. (A hash join of all messages
// with all sessions took ~200 ms per pass at 10 000 sessions.)
func TestUnfinishedReadsOnlyWhatItLooksAt(t *testing.T) {
	ctx := context.Background()
	db := pgtest.OpenWith(t, ctx, postgres.Options{MaxConns: 1})
	seedAnsweredSessions(t, db, 2000, 10)
	if _, err := db.Pool().Exec(ctx, `
		-- Two sessions active minutes ago: one waits for a run, one has a
		-- reply that was never queued.
		INSERT INTO messages (session_key, seq, role, content, external_id, created_at)
		VALUES ('a/telegram:7', 11, 'user', 'hi', '7-11', now() - interval '1 minute');
		UPDATE sessions SET last_seq = 11 WHERE key = 'a/telegram:7';
		UPDATE messages SET created_at = now() - interval '2 minutes' WHERE session_key = 'a/telegram:8' AND seq = 10;
		DELETE FROM outbox WHERE session_key = 'a/telegram:8' AND source_seq = 10;
		-- A job's run waiting for its answer: the scheduler's to take
		-- over (job_runs), never recovery's.
		INSERT INTO sessions (key, agent, scope, last_seq) VALUES ('a/job:report', 'a', 'job:report', 1);
		INSERT INTO messages (session_key, seq, role, content, external_id, created_at)
		VALUES ('a/job:report', 1, 'user', 'report', 'slot:1', now() - interval '1 minute');
		ANALYZE sessions, messages, outbox`); err != nil {
		t.Fatal(err)
	}
	type reads struct{ sessSeq, msgSeq, msgIdx, outSeq int64 }
	pass := func(q bot.UnfinishedQuery) (found []string, r reads) {
		t.Helper()
		s0, m0, o0 := readTableStats(t, db, "sessions"), readTableStats(t, db, "messages"), readTableStats(t, db, "outbox")
		got, err := db.Unfinished(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		s1, m1, o1 := readTableStats(t, db, "sessions"), readTableStats(t, db, "messages"), readTableStats(t, db, "outbox")
		for _, u := range got {
			found = append(found, u.Session)
		}
		return found, reads{s1.SeqScans - s0.SeqScans, m1.SeqScans - m0.SeqScans, m1.IdxScans - m0.IdxScans, o1.SeqScans - o0.SeqScans}
	}

	found, r := pass(bot.UnfinishedQuery{OlderThan: 3 * time.Second, WrittenWithin: 10 * time.Minute})
	if want := []string{"a/telegram:8", "a/telegram:7"}; !reflect.DeepEqual(found, want) {
		t.Errorf("recent pass found %q, want %q", found, want)
	}
	// One range scan of messages by time, one probe per session found
	// (and the planner's look at the ends of the time index).
	if r.sessSeq != 0 || r.msgSeq != 0 || r.outSeq != 0 || r.msgIdx > 10 {
		t.Errorf("recent pass: %d sequential scans of sessions, %d of messages, %d of outbox, %d index scans of messages; want 0, 0, 0, at most 10",
			r.sessSeq, r.msgSeq, r.outSeq, r.msgIdx)
	}

	found, r = pass(bot.UnfinishedQuery{OlderThan: 3 * time.Second})
	if want := []string{"a/telegram:7", "a/telegram:8"}; !reflect.DeepEqual(found, want) {
		t.Errorf("full pass found %q, want %q", found, want)
	}
	if r.msgSeq != 0 || r.outSeq != 0 {
		t.Errorf("full pass: %d sequential scans of messages, %d of outbox; want a probe per session instead", r.msgSeq, r.outSeq)
	}
}

// seedAnsweredSessions stores n sessions of msgs messages each (msgs even:
// user and assistant in turn, every reply delivered), all last written to
// two hours ago.
func seedAnsweredSessions(tb testing.TB, db *postgres.DB, n, msgs int) {
	tb.Helper()
	for _, stmt := range []string{
		`INSERT INTO sessions (key, agent, scope, last_seq, updated_at)
		SELECT 'a/telegram:' || i, 'a', 'dm', $2, now() - interval '2 hours' FROM generate_series(1, $1::int) i`,
		`INSERT INTO messages (session_key, seq, role, content, external_id, created_at)
		SELECT 'a/telegram:' || i, s, CASE WHEN s % 2 = 1 THEN 'user' ELSE 'assistant' END, 'hello',
		       CASE WHEN s % 2 = 1 THEN i || '-' || s END, now() - interval '2 hours'
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
// second on every replica) over 100 000 sessions of 10 messages, none of
// them unfinished: "just" looks at the sessions active in the last
// RecoverJustWritten and "recent" in the last RecoverWrittenWithin (none
// here), "full" at all of them (only when a replica starts).
func BenchmarkUnfinished(b *testing.B) {
	ctx := context.Background()
	db := pgtest.OpenWith(b, ctx, postgres.Options{MaxConns: 1})
	seedAnsweredSessions(b, db, 100_000, 10)
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
