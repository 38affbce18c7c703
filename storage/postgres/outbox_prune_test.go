package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/access"
	"github.com/switchboard-chat/switchboard/bot/approvals"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// TestPruneOutbox: old delivered rows go; pending rows, young rows, the
// rows of a session's newest 50 messages and the rows a decision may still
// edit stay; recovery then finds nothing to send again.
func TestPruneOutbox(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := db.Pool().Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	to := channels.Address{Platform: "telegram", ChatID: "1"}
	enqueue := func(m bot.OutboxMessage) int64 {
		t.Helper()
		m.To = to
		id, err := db.Enqueue(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	want := map[int64]string{} // id → why it stays

	// A session of 60 messages, 30 replies each delivered: those at seqs
	// 2…10 are older than the newest 50 messages and go.
	var doomed []int64
	for seq := int64(1); seq <= 60; seq += 2 {
		if _, err := db.Append(ctx, "a/long",
			agentcore.Message{Role: agentcore.RoleUser, Content: "q"},
			agentcore.Message{Role: agentcore.RoleAssistant, Content: fmt.Sprint("answer ", seq+1)}); err != nil {
			t.Fatal(err)
		}
		id := enqueue(bot.OutboxMessage{Session: "a/long", SourceSeq: seq + 1, Text: "answer"})
		if seq+1 <= 10 {
			doomed = append(doomed, id)
		} else {
			want[id] = fmt.Sprintf("reply %d is among the session's newest 50 messages", seq+1)
		}
	}
	// Notices without a session.
	doomed = append(doomed, enqueue(bot.OutboxMessage{Text: "sent notice"}))
	failed := enqueue(bot.OutboxMessage{Text: "failed notice"})
	doomed = append(doomed, failed)
	want[enqueue(bot.OutboxMessage{Text: "still pending"})] = "pending"

	// Messages posted about decisions.
	exec(`INSERT INTO approvals (id, tool, expires_at, status, decided_at) VALUES
		('ap-pending', 'exec', now() + interval '1 hour', 'pending', NULL),
		('ap-old', 'exec', now() - interval '3 days', 'denied', now() - interval '2 days'),
		('ap-recent', 'exec', now() - interval '2 hours', 'expired', now() - interval '1 hour')`)
	exec(`INSERT INTO access_requests (id, identity, platform) VALUES ('ar-pending', 'telegram:7', 'telegram')`)
	decision := func(kind, subject string) int64 {
		t.Helper()
		id := enqueue(bot.OutboxMessage{Text: "decide " + subject})
		if err := db.AddDecisionMessage(ctx, kind, subject, id, "approver"); err != nil {
			t.Fatal(err)
		}
		return id
	}
	want[decision(approvals.Kind, "ap-pending")] = "its approval is pending"
	want[decision(approvals.Kind, "ap-recent")] = "its approval was decided an hour ago"
	want[decision(access.KindRequest, "ar-pending")] = "its access request is pending"
	doomed = append(doomed, decision(approvals.Kind, "ap-old"))
	doomed = append(doomed, decision(approvals.Kind, "ap-missing"))

	// Everything was delivered (or given up on) eight days ago but for
	// the pending row and the newest, delivered yesterday.
	exec(`UPDATE outbox SET status = 'sent', sent_at = now() - interval '8 days', created_at = now() - interval '8 days'
		WHERE text <> 'still pending'`)
	exec(`UPDATE outbox SET status = 'failed' WHERE id = $1`, failed)
	exec(`UPDATE outbox SET created_at = now() - interval '8 days' WHERE text = 'still pending'`)
	exec(`UPDATE messages SET created_at = now() - interval '8 days'`)
	young := enqueue(bot.OutboxMessage{Text: "sent yesterday"})
	exec(`UPDATE outbox SET status = 'sent', sent_at = now() - interval '1 day', created_at = now() - interval '1 day' WHERE id = $1`, young)
	want[young] = "delivered a day ago"

	// Dispatchers: one silent for 8 days, one heard from a minute ago.
	exec(`INSERT INTO replicas (owner, seen_at) VALUES ('gone', now() - interval '8 days'), ('alive', now() - interval '1 minute')`)

	n, err := db.PruneOutbox(ctx, 7*24*time.Hour, 3) // pages of 3 rows: the walk goes on across pages
	if err != nil {
		t.Fatal(err)
	}
	if n != len(doomed) {
		t.Errorf("PruneOutbox deleted %d rows, want %d", n, len(doomed))
	}
	rows, err := db.Pool().Query(ctx, `SELECT id FROM outbox ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	var left []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		left = append(left, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for id, why := range want {
		if !slices.Contains(left, id) {
			t.Errorf("row %d was deleted; it must stay: %s", id, why)
		}
	}
	for _, id := range doomed {
		if slices.Contains(left, id) {
			t.Errorf("row %d is still there; it is old and nothing reads it", id)
		}
	}
	var decisions int
	if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM decision_messages WHERE subject_id IN ('ap-old', 'ap-missing')`).Scan(&decisions); err != nil {
		t.Fatal(err)
	}
	if decisions != 0 {
		t.Errorf("%d decision messages of pruned rows are left", decisions)
	}
	if list, err := db.DecisionMessagesOf(ctx, approvals.Kind, "ap-recent"); err != nil || len(list) != 1 {
		t.Errorf("DecisionMessagesOf(ap-recent) = %v, %v; want its one message", list, err)
	}

	var owners []string
	if err := db.Pool().QueryRow(ctx, `SELECT array_agg(owner ORDER BY owner) FROM replicas`).Scan(&owners); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(owners, []string{"alive"}) {
		t.Errorf("dispatchers left = %v; want [alive]: the one silent for 8 days is forgotten", owners)
	}

	// Recovery sees every reply as delivered still.
	un, err := db.Unfinished(ctx, bot.UnfinishedQuery{OlderThan: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if len(un) != 0 {
		t.Errorf("after pruning, Unfinished = %+v; want none", un)
	}

	// A second pass finds nothing more.
	if n, err := db.PruneOutbox(ctx, 7*24*time.Hour, 3); err != nil || n != 0 {
		t.Errorf("second PruneOutbox = %d, %v; want 0, nil", n, err)
	}
	if _, err := db.PruneOutbox(ctx, 0, 3); err == nil {
		t.Error("PruneOutbox with keep 0 deleted without complaint; want an error")
	}
}

// TestPruneOutboxStopsAtYoungRows: the walk ends at the first page whose
// last row is younger than keep, so a pass reads only the old part of the
// table.
func TestPruneOutboxStopsAtYoungRows(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	var ids []int64
	for i := range 6 {
		id, err := db.Enqueue(ctx, bot.OutboxMessage{To: channels.Address{Platform: "telegram", ChatID: "1"}, Text: fmt.Sprint(i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	// Rows 0, 1 old; 2 young; 3, 4, 5 old again (not a real order: it
	// shows where the walk stops).
	if _, err := db.Pool().Exec(ctx, `UPDATE outbox SET status = 'sent',
		created_at = CASE WHEN id = $1 THEN now() ELSE now() - interval '8 days' END`, ids[2]); err != nil {
		t.Fatal(err)
	}
	n, err := db.PruneOutbox(ctx, 7*24*time.Hour, 3)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("PruneOutbox deleted %d rows; want 2: the first page's old rows, then stop at its young last row", n)
	}
}

// BenchmarkPruneOutbox times PruneOutbox's pages of 1 000 rows over 1 000
// sessions of 120 messages, each with its 60 replies delivered eight days
// ago: "delete" is a pass that deletes the 35 000 rows older than each
// session's newest 50 messages; "kept" is the next hour's pass, which walks
// the 25 000 rows it keeps and deletes none (what an idle deployment pays
// every hour).
func BenchmarkPruneOutbox(b *testing.B) {
	ctx := context.Background()
	db := pgtest.OpenWith(b, ctx, postgres.Options{MaxConns: 1})
	const sessions, msgs = 1000, 120
	seed := func() {
		b.Helper()
		if _, err := db.Pool().Exec(ctx, `TRUNCATE sessions, messages, outbox CASCADE`); err != nil {
			b.Fatal(err)
		}
		seedAnsweredSessions(b, db, sessions, msgs)
		if _, err := db.Pool().Exec(ctx, `UPDATE outbox SET created_at = now() - interval '8 days'`); err != nil {
			b.Fatal(err)
		}
		if _, err := db.Pool().Exec(ctx, `VACUUM ANALYZE sessions, outbox`); err != nil {
			b.Fatal(err)
		}
	}
	const keep, page = 7 * 24 * time.Hour, 1000
	wantGone := sessions * (msgs - 50) / 2
	b.Run("delete", func(b *testing.B) {
		for range b.N {
			b.StopTimer()
			seed()
			b.StartTimer()
			n, err := db.PruneOutbox(ctx, keep, page)
			if err != nil || n != wantGone {
				b.Fatalf("PruneOutbox = %d, %v; want %d", n, err, wantGone)
			}
		}
		b.ReportMetric(float64(wantGone), "rows-deleted/pass")
	})
	b.Run("kept", func(b *testing.B) {
		seed()
		if n, err := db.PruneOutbox(ctx, keep, page); err != nil || n != wantGone {
			b.Fatalf("PruneOutbox = %d, %v; want %d", n, err, wantGone)
		}
		if _, err := db.Pool().Exec(ctx, `VACUUM ANALYZE outbox`); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for range b.N {
			if n, err := db.PruneOutbox(ctx, keep, page); err != nil || n != 0 {
				b.Fatalf("PruneOutbox = %d, %v; want 0", n, err)
			}
		}
		b.ReportMetric(float64(sessions*msgs/2-wantGone), "rows-walked/pass")
	})
}
