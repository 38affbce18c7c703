package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// claimOf reads who holds outbox row id and its attempts.
func claimOf(t *testing.T, db *postgres.DB, id int64) (owner string, attempts int) {
	t.Helper()
	var o *string
	if err := db.Pool().QueryRow(context.Background(), `SELECT claimed_by, attempts FROM outbox WHERE id = $1`, id).Scan(&o, &attempts); err != nil {
		t.Fatal(err)
	}
	if o != nil {
		owner = *o
	}
	return owner, attempts
}

func TestEnqueueClaimedYieldsToEarlierRowsOfTheChat(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	claim := bot.Claim{Owner: "replica-1", Lease: time.Minute}
	first, claimed, err := db.EnqueueClaimed(ctx, reply("", 0, "one"), claim)
	if err != nil || !claimed || first.ID == 0 || first.Attempts != 1 {
		t.Fatalf("first = %+v, claimed %v, %v; want claimed with attempt 1", first, claimed, err)
	}
	if owner, attempts := claimOf(t, db, first.ID); owner != "replica-1" || attempts != 1 {
		t.Errorf("stored claim = %q, %d attempts", owner, attempts)
	}
	// The chat's earlier row is held by the same claimer: the next is claimed too.
	second, claimed, err := db.EnqueueClaimed(ctx, reply("", 0, "two"), claim)
	if err != nil || !claimed {
		t.Fatalf("second = %+v, claimed %v, %v; want claimed", second, claimed, err)
	}
	// Another claimer must not overtake them: its row waits, unclaimed.
	third, claimed, err := db.EnqueueClaimed(ctx, reply("", 0, "three"), bot.Claim{Owner: "replica-2", Lease: time.Minute})
	if err != nil || claimed || third.Attempts != 0 {
		t.Fatalf("third = %+v, claimed %v, %v; want unclaimed", third, claimed, err)
	}
	if owner, _ := claimOf(t, db, third.ID); owner != "" {
		t.Errorf("third claimed by %q", owner)
	}
	// Released for a retry, the first row holds back even its own claimer's next one.
	if err := db.Retry(ctx, first.Row(), time.Now().Add(time.Hour), "flood"); err != nil {
		t.Fatal(err)
	}
	fourth, claimed, err := db.EnqueueClaimed(ctx, reply("", 0, "four"), claim)
	if err != nil || claimed {
		t.Fatalf("fourth = %+v, claimed %v, %v; want unclaimed behind the released row", fourth, claimed, err)
	}
	// No claim asked: a plain pending row.
	other := reply("", 0, "elsewhere")
	other.To.ChatID = "43"
	if row, claimed, err := db.EnqueueClaimed(ctx, other, bot.Claim{}); err != nil || claimed {
		t.Fatalf("zero claim = %+v, claimed %v, %v", row, claimed, err)
	}
	// Idempotent per (session, seq): the existing row comes back, unclaimed.
	dup := reply("a/telegram:42", 9, "x")
	a, _, err := db.EnqueueClaimed(ctx, dup, bot.Claim{Owner: "replica-3", Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	b, claimed, err := db.EnqueueClaimed(ctx, dup, bot.Claim{Owner: "replica-3", Lease: time.Minute})
	if err != nil || claimed || b.ID != a.ID {
		t.Fatalf("repeat = %d, claimed %v, %v; want %d unclaimed", b.ID, claimed, err, a.ID)
	}
	// Idempotent per Key (an escalation card queued again after a crash):
	// one row, the first one.
	keyed := reply("", 0, "escalated")
	keyed.To.ChatID, keyed.Key = "44", "escalation:abc:telegram:1009"
	k1, _, err := db.EnqueueClaimed(ctx, keyed, claim)
	if err != nil {
		t.Fatal(err)
	}
	k2, claimed, err := db.EnqueueClaimed(ctx, keyed, claim)
	if err != nil || claimed || k2.ID != k1.ID {
		t.Fatalf("keyed repeat = %d, claimed %v, %v; want %d unclaimed", k2.ID, claimed, err, k1.ID)
	}
	var n int
	if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM outbox WHERE dedupe_key = $1`, keyed.Key).Scan(&n); err != nil || n != 1 {
		t.Fatalf("rows with the key = %d, %v; want 1", n, err)
	}
}

func TestInsertReplyStoresReplyAndRowTogether(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	const session = "a/telegram:42"
	user := func(text, id string) agentcore.Message {
		return agentcore.Message{Role: agentcore.RoleUser, Content: text, ExternalID: id}
	}
	if _, err := db.Append(ctx, session, user("hi", "u1")); err != nil {
		t.Fatal(err)
	}
	claim := bot.Claim{Owner: "replica-1", Lease: time.Minute}
	out, err := db.InsertReply(ctx, session, 1, agentcore.Message{Role: agentcore.RoleAssistant, Content: "hello"}, reply("", 0, "hello!"), claim)
	if err != nil {
		t.Fatal(err)
	}
	if out.Seq != 2 || out.Moved != 0 || !out.Claimed || out.Row.Session != session || out.Row.SourceSeq != 2 || out.Row.Text != "hello!" || out.Row.Attempts != 1 {
		t.Fatalf("InsertReply = %+v", out)
	}
	// Messages that arrived meanwhile move behind the reply, in the same transaction as its row.
	for _, m := range []agentcore.Message{user("two", "u2"), user("three", "u3")} {
		if _, err := db.Append(ctx, session, m); err != nil {
			t.Fatal(err)
		}
	}
	out, err = db.InsertReply(ctx, session, 3, agentcore.Message{Role: agentcore.RoleAssistant, Content: "re two"}, reply("", 0, "re two"), claim)
	if err != nil || out.Seq != 4 || out.Moved != 1 || out.Row.SourceSeq != 4 || !out.Claimed {
		t.Fatalf("InsertReply with a message after = %+v, %v; want seq 4, 1 moved, claimed", out, err)
	}
	msgs, err := db.Load(ctx, session, 0)
	if err != nil || len(msgs) != 5 || msgs[3].Content != "re two" || msgs[4].Content != "three" {
		t.Fatalf("session = %+v, %v", msgs, err)
	}
	// A conflict stores neither the reply nor its row.
	var before int
	if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM outbox`).Scan(&before); err != nil {
		t.Fatal(err)
	}
	if _, err := db.InsertReply(ctx, session, 1, agentcore.Message{Role: agentcore.RoleAssistant, Content: "late"}, reply("", 0, "late"), claim); !errors.Is(err, agentcore.ErrConflict) {
		t.Fatalf("InsertReply behind another run's reply: err = %v, want ErrConflict", err)
	}
	var after int
	if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM outbox`).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("a refused InsertReply wrote %d outbox rows", after-before)
	}
	// AppendReply: at the end, with its row.
	app, err := db.AppendReply(ctx, session, agentcore.Message{Role: agentcore.RoleAssistant, Content: "sorry"}, reply("", 0, "sorry"), bot.Claim{})
	if err != nil || app.Seq != 6 || app.Row.SourceSeq != 6 || app.Claimed {
		t.Fatalf("AppendReply = %+v, %v; want seq 6 unclaimed", app, err)
	}
	// Nothing is left undelivered for recovery.
	if un, err := db.Unfinished(ctx, bot.UnfinishedQuery{}); err != nil || len(un) != 0 {
		t.Errorf("Unfinished = %+v, %v; want none", un, err)
	}
}

func TestMarkSentAllMarksEachRow(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	var sent []bot.Sent
	for i, text := range []string{"a", "b", "c"} {
		id, err := db.Enqueue(ctx, reply("", 0, text))
		if err != nil {
			t.Fatal(err)
		}
		if i < 2 {
			sent = append(sent, bot.Sent{OutboxRow: bot.OutboxRow{ID: id}, PlatformMessageID: "pm-" + text})
		}
	}
	if err := db.MarkSentAll(ctx, sent); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Pool().Query(ctx, `SELECT text, status, coalesce(platform_message_id, '') FROM outbox ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var text, status, pm string
		if err := rows.Scan(&text, &status, &pm); err != nil {
			t.Fatal(err)
		}
		got = append(got, text+":"+status+":"+pm)
	}
	want := []string{"a:sent:pm-a", "b:sent:pm-b", "c:pending:"}
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("rows = %q, want %q", got, want)
	}
}

// A failover to an asynchronous standby can lose a reply's row while the
// dispatcher holds it, and hand its id to a later row.
// Settling the lost row must then leave the later one alone: a sent mark
// would keep it from ever being delivered.
func TestSettlingALostReplyLeavesTheRowThatTookItsID(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	const session = "a/telegram:42"
	if _, err := db.Append(ctx, session, agentcore.Message{Role: agentcore.RoleUser, Content: "hi", ExternalID: "u1"}); err != nil {
		t.Fatal(err)
	}
	lost, err := db.InsertReply(ctx, session, 1, agentcore.Message{Role: agentcore.RoleAssistant, Content: "hello"},
		reply("", 0, "hello"), bot.Claim{Owner: "replica-1", Lease: time.Minute})
	if err != nil || !lost.Claimed {
		t.Fatalf("InsertReply = %+v, %v", lost, err)
	}
	// The crash: the reply's row is gone, and another chat's reply took its id.
	for _, sql := range []string{
		`DELETE FROM outbox WHERE id = $1`,
		`INSERT INTO outbox (id, session_key, source_seq, platform, chat_id, text, claimed_by, claimed_until, attempts)
			VALUES ($1, 'a/telegram:43', 5, 'telegram', '43', 'for another chat', 'replica-1', now() + interval '1 minute', 1)`,
	} {
		if _, err := db.Pool().Exec(ctx, sql, lost.Row.ID); err != nil {
			t.Fatal(err)
		}
	}
	row := lost.Row.Row()
	if err := db.MarkSentAll(ctx, []bot.Sent{{OutboxRow: row, PlatformMessageID: "900"}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Retry(ctx, row, time.Now().Add(time.Hour), "flood"); err == nil {
		t.Error("Retry of the lost row succeeded")
	}
	if err := db.Fail(ctx, row, "gone"); err == nil {
		t.Error("Fail of the lost row succeeded")
	}
	var status, owner string
	var attempts int
	var due bool
	if err := db.Pool().QueryRow(ctx, `SELECT status, coalesce(claimed_by, ''), attempts, next_attempt_at <= now() FROM outbox WHERE id = $1`,
		lost.Row.ID).Scan(&status, &owner, &attempts, &due); err != nil {
		t.Fatal(err)
	}
	if status != "pending" || owner != "replica-1" || attempts != 1 || !due {
		t.Errorf("the row that took the id: status %q, claimed by %q, %d attempts, due %v; want it untouched", status, owner, attempts, due)
	}
	// The row itself is settled by its own name.
	later := bot.OutboxRow{ID: lost.Row.ID, Session: "a/telegram:43", SourceSeq: 5}
	if err := db.MarkSentAll(ctx, []bot.Sent{{OutboxRow: later, PlatformMessageID: "902"}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Pool().QueryRow(ctx, `SELECT status FROM outbox WHERE id = $1`, lost.Row.ID).Scan(&status); err != nil || status != "sent" {
		t.Errorf("status after its own mark = %q, %v", status, err)
	}
}

// readIndexScans reads how many scans each index of table has had. db must
// have one connection (see readTableStats).
func readIndexScans(t *testing.T, db *postgres.DB, table string) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	if _, err := db.Pool().Exec(ctx, `SELECT pg_stat_force_next_flush()`); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Pool().Query(ctx, `SELECT indexrelname, idx_scan FROM pg_stat_user_indexes WHERE relname = $1`, table)
	if err != nil {
		t.Fatal(err)
	}
	scans, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (struct {
		name  string
		scans int64
	}, error) {
		var r struct {
			name  string
			scans int64
		}
		err := row.Scan(&r.name, &r.scans)
		return r, err
	})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, r := range scans {
		out[r.name] = r.scans
	}
	return out
}

// Writing a reply looks for a pending row of its chat. In the plan a
// connection keeps for the statement (generic, from its sixth run on) that
// must be a lookup in outbox_pending_chat_idx, once per reply: the due
// index had the same predicate, and with the statistics of a quiet table
// (vacuumed with no row pending) the planner took it, and walked every
// pending entry of every chat, three times per reply (migration 19).
func TestReplyLooksForItsChatsPendingRowsInTheChatIndex(t *testing.T) {
	ctx := context.Background()
	u, err := url.Parse(pgtest.New(t))
	if err != nil {
		t.Fatal(err)
	}
	u.RawQuery += "&options=-c%20plan_cache_mode%3Dforce_generic_plan"
	db, err := postgres.Open(ctx, u.String(), postgres.Options{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	if err := postgres.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	claim := bot.Claim{Owner: "replica-1", Lease: time.Minute}
	store := func(session string) {
		t.Helper()
		seq, err := db.Append(ctx, session, agentcore.Message{Role: agentcore.RoleUser, Content: "hi"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.InsertReply(ctx, session, seq, agentcore.Message{Role: agentcore.RoleAssistant, Content: "hello"},
			reply("", 0, "hello"), claim); err != nil {
			t.Fatal(err)
		}
	}
	// A table of delivered rows, none pending: too large to read whole for
	// one chat.
	if _, err := db.Pool().Exec(ctx, `INSERT INTO outbox (platform, chat_id, text, status)
		SELECT 'telegram', i::text, 'sent before', 'sent' FROM generate_series(1, 5000) AS i`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool().Exec(ctx, `VACUUM ANALYZE outbox`); err != nil {
		t.Fatal(err)
	}

	before := readIndexScans(t, db, "outbox")
	const replies = 8
	for i := range replies {
		store(fmt.Sprintf("a/telegram:%d", 2+i))
	}
	after := readIndexScans(t, db, "outbox")
	if _, ok := after["outbox_pending_chat_idx"]; !ok {
		t.Fatalf("no outbox_pending_chat_idx among %v", after)
	}
	for name, n := range after {
		scans := n - before[name]
		switch {
		case name == "outbox_pending_chat_idx" && scans != replies:
			t.Errorf("%s: %d scans for %d replies, want one each", name, scans, replies)
		case strings.Contains(name, "due") && scans != 0:
			t.Errorf("%s: %d scans for %d replies; the chat's pending rows are looked for there", name, scans, replies)
		}
	}
}
