package postgres_test

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

func reply(session string, seq int64, text string) bot.OutboxMessage {
	return bot.OutboxMessage{
		Session:   session,
		SourceSeq: seq,
		To:        channels.Address{Platform: "telegram", ChatID: "42", ThreadID: "7"},
		Text:      text,
	}
}

func TestOutboxEnqueueClaimRoundTrip(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	m := reply("a/telegram:42", 3, "**hello**")
	m.Buttons = [][]channels.Button{{{Label: "Approve", Data: "ap:1"}, {Label: "Deny", Data: "dn:1"}}, {{Label: "More", Data: "m"}}}
	m.ReplyTo = "555"
	id, err := db.Enqueue(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.Claim(ctx, "replica-1", 10, time.Minute, false)
	if err != nil {
		t.Fatal(err)
	}
	m.ID, m.Attempts = id, 1
	if len(got) != 1 || !reflect.DeepEqual(got[0], m) {
		t.Fatalf("Claim = %#v, want [%#v]", got, m)
	}
	var owner string
	if err := db.Pool().QueryRow(ctx, `SELECT claimed_by FROM outbox WHERE id = $1`, id).Scan(&owner); err != nil {
		t.Fatal(err)
	}
	if owner != "replica-1" {
		t.Errorf("claimed_by = %q", owner)
	}
	// Leased: nobody else gets it.
	if again, err := db.Claim(ctx, "replica-2", 10, time.Minute, false); err != nil || len(again) != 0 {
		t.Fatalf("Claim of a leased message = %v, %v; want none", again, err)
	}
}

func TestOutboxEnqueueIdempotentPerSourceSeq(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	first, err := db.Enqueue(ctx, reply("a/s", 5, "first"))
	if err != nil {
		t.Fatal(err)
	}
	second, err := db.Enqueue(ctx, reply("a/s", 5, "second"))
	if err != nil {
		t.Fatal(err)
	}
	if second != first {
		t.Errorf("second Enqueue for the same (session, seq) = %d, want the first id %d", second, first)
	}
	other, err := db.Enqueue(ctx, reply("a/s", 6, "other"))
	if err != nil || other == first {
		t.Errorf("Enqueue for another seq = %d, %v; want a new row", other, err)
	}
	// Notices (seq 0, no session) are never merged.
	n1, err1 := db.Enqueue(ctx, reply("", 0, "notice"))
	n2, err2 := db.Enqueue(ctx, reply("", 0, "notice"))
	if err1 != nil || err2 != nil || n1 == n2 {
		t.Errorf("two notices = %d, %d (%v, %v); want two rows", n1, n2, err1, err2)
	}
	var count int
	if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM outbox`).Scan(&count); err != nil {
		t.Fatal(err)
	}
	if count != 4 {
		t.Errorf("%d outbox rows, want 4", count)
	}
	got, err := db.Claim(ctx, "r", 10, time.Minute, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got[0].Text != "first" || got[0].ID != first {
		t.Errorf("Claim = %#v, want 4 rows oldest first with the first text kept", got)
	}
	if got[2].Session != "" || got[2].SourceSeq != 0 {
		t.Errorf("notice came back as session %q seq %d", got[2].Session, got[2].SourceSeq)
	}
}

// A row with a key is stored once: a tool's call run again after a crash
// finds its file's row and queues no second one.
func TestOutboxEnqueueIdempotentPerKey(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	file := func(key string) bot.OutboxMessage {
		m := reply("", 0, "caption")
		m.Key = key
		m.File = &bot.OutboxFile{SHA256: "ab12", Kind: channels.KindDocument, Name: "a.txt", Type: "text/plain", Size: 3}
		return m
	}
	first, err := db.Enqueue(ctx, file("call:one"))
	if err != nil {
		t.Fatal(err)
	}
	if again, err := db.Enqueue(ctx, file("call:one")); err != nil || again != first {
		t.Errorf("the same key again = %d, %v; want the first row %d", again, err, first)
	}
	other, err := db.Enqueue(ctx, file("call:two"))
	if err != nil || other == first {
		t.Errorf("another key = %d, %v; want a new row", other, err)
	}
	n1, _ := db.Enqueue(ctx, file(""))
	if n2, err := db.Enqueue(ctx, file("")); err != nil || n1 == n2 {
		t.Errorf("two rows without a key = %d, %d (%v); want two rows", n1, n2, err)
	}
}

func TestOutboxConcurrentEnqueueSameSeq(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	const n = 10
	ids := make([]int64, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			id, err := db.Enqueue(ctx, reply("a/s", 9, "x"))
			if err != nil {
				t.Error(err)
			}
			ids[i] = id
		})
	}
	wg.Wait()
	for _, id := range ids[1:] {
		if id != ids[0] || id == 0 {
			t.Fatalf("concurrent Enqueue ids %v, want one id", ids)
		}
	}
}

func TestOutboxRetryMarkSentFail(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	sent, _ := db.Enqueue(ctx, reply("a/s", 1, "to send"))
	later, _ := db.Enqueue(ctx, reply("a/s", 2, "to retry"))
	failed, _ := db.Enqueue(ctx, reply("a/s", 3, "to fail"))
	if c, err := db.Claim(ctx, "r", 10, time.Minute, false); err != nil || len(c) != 3 {
		t.Fatalf("Claim = %v, %v", c, err)
	}
	row := func(id, seq int64) bot.OutboxRow { return bot.OutboxRow{ID: id, Session: "a/s", SourceSeq: seq} }

	if err := db.MarkSentAll(ctx, []bot.Sent{{OutboxRow: row(sent, 1), PlatformMessageID: "tg-100"}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Retry(ctx, row(later, 2), time.Now().Add(time.Hour), "rate limited"); err != nil {
		t.Fatal(err)
	}
	if err := db.Fail(ctx, row(failed, 3), "chat not found"); err != nil {
		t.Fatal(err)
	}
	if c, err := db.Claim(ctx, "r", 10, time.Minute, false); err != nil || len(c) != 0 {
		t.Fatalf("Claim with nothing due = %v, %v; want none", c, err)
	}

	// Once due, the retried message comes back with its attempts counted.
	if err := db.Retry(ctx, row(later, 2), time.Now().Add(-time.Second), "again"); err != nil {
		t.Fatal(err)
	}
	c, err := db.Claim(ctx, "r", 10, time.Minute, false)
	if err != nil || len(c) != 1 || c[0].ID != later || c[0].Attempts != 2 {
		t.Fatalf("Claim after due Retry = %#v, %v; want message %d with 2 attempts", c, err, later)
	}

	var (
		status, platformID, lastErr string
		sentAt                      *time.Time
	)
	if err := db.Pool().QueryRow(ctx, `SELECT status, platform_message_id, sent_at FROM outbox WHERE id = $1`, sent).
		Scan(&status, &platformID, &sentAt); err != nil {
		t.Fatal(err)
	}
	if status != "sent" || platformID != "tg-100" || sentAt == nil {
		t.Errorf("sent row: status %q platform id %q sent_at %v", status, platformID, sentAt)
	}
	if err := db.Pool().QueryRow(ctx, `SELECT status, last_error FROM outbox WHERE id = $1`, failed).Scan(&status, &lastErr); err != nil {
		t.Fatal(err)
	}
	if status != "failed" || lastErr != "chat not found" {
		t.Errorf("failed row: status %q last_error %q", status, lastErr)
	}

	// A settled message cannot be retried or failed again; unknown ids say so.
	if err := db.Retry(ctx, row(sent, 1), time.Now(), "x"); err == nil || !strings.Contains(err.Error(), "already sent") {
		t.Errorf("Retry of a sent message = %v, want an error saying it is already sent", err)
	}
	if err := db.Fail(ctx, row(failed, 3), "x"); err == nil || !strings.Contains(err.Error(), "already failed") {
		t.Errorf("Fail of a failed message = %v", err)
	}
	if err := db.Retry(ctx, bot.OutboxRow{ID: 999999}, time.Now(), "x"); err == nil || !strings.Contains(err.Error(), "no such message") {
		t.Errorf("Retry of an unknown id = %v, want an error saying there is no such message", err)
	}
	// Marking an unknown id sent marks nothing.
	if err := db.MarkSentAll(ctx, []bot.Sent{{OutboxRow: bot.OutboxRow{ID: 999999}, PlatformMessageID: "x"}}); err != nil {
		t.Fatal(err)
	}
	var sentRows int
	if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM outbox WHERE status = 'sent'`).Scan(&sentRows); err != nil || sentRows != 1 {
		t.Errorf("sent rows after marking an unknown id = %d, %v; want 1", sentRows, err)
	}
}

func TestOutboxExpiredLeaseIsClaimedAgain(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	id, _ := db.Enqueue(ctx, reply("a/s", 1, "x"))
	if c, _ := db.Claim(ctx, "dead-replica", 1, time.Minute, false); len(c) != 1 {
		t.Fatalf("first claim got %d", len(c))
	}
	// The claimer died; let its lease run out.
	if _, err := db.Pool().Exec(ctx, `UPDATE outbox SET claimed_until = now() - interval '1 second' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	c, err := db.Claim(ctx, "live-replica", 1, time.Minute, false)
	if err != nil || len(c) != 1 || c[0].ID != id || c[0].Attempts != 2 {
		t.Fatalf("Claim after lease expiry = %#v, %v", c, err)
	}
}

func TestOutboxConcurrentClaimersNeverShare(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	db, err := postgres.Open(ctx, url, postgres.Options{MaxConns: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	if err := postgres.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	const total = 200
	for i := range total {
		if _, err := db.Enqueue(ctx, reply("a/s", int64(i+1), "x")); err != nil {
			t.Fatal(err)
		}
	}
	const claimers = 6
	claimed := make([][]int64, claimers)
	var (
		wg    sync.WaitGroup
		count atomic.Int64
	)
	for c := range claimers {
		wg.Go(func() {
			for {
				msgs, err := db.Claim(ctx, "owner", 7, time.Hour, false)
				if err != nil {
					t.Error(err)
					return
				}
				if len(msgs) == 0 {
					return
				}
				if count.Add(int64(len(msgs))) > total {
					t.Error("more claims than messages: a leased message was handed out again")
					return
				}
				for _, m := range msgs {
					claimed[c] = append(claimed[c], m.ID)
				}
			}
		})
	}
	wg.Wait()
	seen := map[int64]int{}
	for c, ids := range claimed {
		for _, id := range ids {
			if prev, dup := seen[id]; dup {
				t.Fatalf("message %d claimed by claimer %d and %d", id, prev, c)
			}
			seen[id] = c
		}
	}
	if len(seen) != total {
		t.Errorf("%d messages claimed, want %d", len(seen), total)
	}
}

func TestOutboxBookkeepingKeepsLaterCommitsDurable(t *testing.T) {
	ctx := context.Background()
	// One connection, so every call below runs on the one checked next.
	db := pgtest.OpenWith(t, ctx, postgres.Options{MaxConns: 1})
	a, _ := db.Enqueue(ctx, reply("a/s", 1, "a"))
	b, _ := db.Enqueue(ctx, reply("a/s", 2, "b"))
	c, _ := db.Enqueue(ctx, reply("a/s", 3, "c"))
	if got, err := db.Claim(ctx, "r", 10, time.Minute, false); err != nil || len(got) != 3 {
		t.Fatalf("Claim = %v, %v", got, err)
	}
	row := func(id, seq int64) bot.OutboxRow { return bot.OutboxRow{ID: id, Session: "a/s", SourceSeq: seq} }
	if err := db.MarkSentAll(ctx, []bot.Sent{{OutboxRow: row(a, 1), PlatformMessageID: "1"}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Retry(ctx, row(b, 2), time.Now(), "later"); err != nil {
		t.Fatal(err)
	}
	if err := db.Fail(ctx, row(c, 3), "never"); err != nil {
		t.Fatal(err)
	}
	if err := db.Retry(ctx, row(a, 1), time.Now(), "x"); err == nil {
		t.Fatal("Retry of a sent message succeeded")
	}
	// Bookkeeping leaves the connection's commits durable: its next
	// transactions (Enqueue, Append) wait for their WAL flush.
	var setting string
	if err := db.Pool().QueryRow(ctx, `SELECT current_setting('synchronous_commit')`).Scan(&setting); err != nil {
		t.Fatal(err)
	}
	if setting != "on" {
		t.Errorf("synchronous_commit after outbox bookkeeping = %q, want on", setting)
	}
	var status string
	if err := db.Pool().QueryRow(ctx, `SELECT status FROM outbox WHERE id = $1`, a).Scan(&status); err != nil || status != "sent" {
		t.Errorf("status of the sent message = %q, %v", status, err)
	}
}

// The rows of a claimer that stopped heartbeating (it died mid-send) are
// claimed again at once, not after their lease; a live claimer's are not.
func TestOutboxDeadOwnersRowsAreClaimedAgain(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	if _, err := db.Enqueue(ctx, reply("a/telegram:42", 1, "in doubt")); err != nil {
		t.Fatal(err)
	}
	if err := db.Heartbeat(ctx, "old-process"); err != nil {
		t.Fatal(err)
	}
	if got, err := db.Claim(ctx, "old-process", 10, time.Hour, false); err != nil || len(got) != 1 {
		t.Fatalf("first claim = %v, %v", got, err)
	}
	if err := db.Heartbeat(ctx, "new-process"); err != nil {
		t.Fatal(err)
	}
	if got, err := db.Claim(ctx, "new-process", 10, time.Hour, false); err != nil || len(got) != 0 {
		t.Fatalf("a live owner's row was claimed again: %v, %v", got, err)
	}
	// The old process is killed: its heartbeat goes stale.
	if _, err := db.Pool().Exec(ctx, `UPDATE replicas SET seen_at = now() - interval '1 minute' WHERE owner = 'old-process'`); err != nil {
		t.Fatal(err)
	}
	got, err := db.Claim(ctx, "new-process", 10, time.Hour, false)
	if err != nil || len(got) != 1 || got[0].Text != "in doubt" || got[0].Attempts != 2 {
		t.Fatalf("claim after the owner died = %+v, %v; want the row, attempt 2", got, err)
	}
}

// An owner that ended its heartbeat (it holds nothing) leaves none behind
// to go stale: what it claims next is claimed again only after the lease,
// even minutes later, until it heartbeats again.
func TestOutboxEndedHeartbeatLeavesClaimsToTheirLease(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	if err := db.Heartbeat(ctx, "idle-process"); err != nil {
		t.Fatal(err)
	}
	if err := db.EndHeartbeat(ctx, "idle-process"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Enqueue(ctx, reply("a/telegram:42", 1, "claimed after idle")); err != nil {
		t.Fatal(err)
	}
	if got, err := db.Claim(ctx, "idle-process", 10, time.Hour, false); err != nil || len(got) != 1 {
		t.Fatalf("claim = %v, %v", got, err)
	}
	// Minutes pass before its next heartbeat.
	if _, err := db.Pool().Exec(ctx, `UPDATE replicas SET seen_at = now() - interval '10 minutes'`); err != nil {
		t.Fatal(err)
	}
	if got, err := db.Claim(ctx, "other-process", 10, time.Hour, false); err != nil || len(got) != 0 {
		t.Fatalf("another owner claimed the row of an owner without a heartbeat: %v, %v", got, err)
	}
	if err := db.EndHeartbeat(ctx, "never-beat"); err != nil {
		t.Fatalf("ending a heartbeat that is not there: %v", err)
	}
}

// A Claim with beat writes the claimer's heartbeat in the same statement
// when, and only when, it claims something: an owner that had none (it
// was idle) is covered the moment its claims commit, and an idle poll
// writes nothing.
func TestOutboxClaimWithBeatWritesHeartbeatOnlyWhenItClaims(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	beats := func() int {
		t.Helper()
		var n int
		if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM replicas WHERE owner = 'waking'
				AND seen_at > now() - interval '1 minute'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if got, err := db.Claim(ctx, "waking", 10, time.Hour, true); err != nil || len(got) != 0 {
		t.Fatalf("claim of nothing = %v, %v", got, err)
	}
	if n := beats(); n != 0 {
		t.Fatalf("an idle poll with beat wrote a heartbeat (%d rows); want none", n)
	}
	if _, err := db.Enqueue(ctx, reply("a/telegram:42", 1, "first")); err != nil {
		t.Fatal(err)
	}
	if got, err := db.Claim(ctx, "waking", 10, time.Hour, false); err != nil || len(got) != 1 {
		t.Fatalf("claim = %v, %v", got, err)
	}
	if n := beats(); n != 0 {
		t.Fatalf("a claim without beat wrote a heartbeat (%d rows); want none", n)
	}
	// Delivered; then a stale heartbeat is renewed by a claim, as a
	// missing one is written.
	if _, err := db.Pool().Exec(ctx, `UPDATE outbox SET status = 'sent'`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool().Exec(ctx, `INSERT INTO replicas (owner, seen_at) VALUES ('waking', now() - interval '10 minutes')`); err != nil {
		t.Fatal(err)
	}
	// claimWaking queues a reply and has "waking" claim it with beat.
	claimWaking := func(seq int64, text string) {
		t.Helper()
		if _, err := db.Enqueue(ctx, reply("a/telegram:42", seq, text)); err != nil {
			t.Fatal(err)
		}
		if got, err := db.Claim(ctx, "waking", 10, time.Hour, true); err != nil || len(got) != 1 || got[0].Text != text {
			t.Fatalf("claim = %+v, %v; want the row %q", got, err, text)
		}
	}
	claimWaking(2, "second")
	if n := beats(); n != 1 {
		t.Fatalf("after a claim with beat: %d fresh heartbeats; want 1", n)
	}
	// The owner is alive: another claimer leaves its row alone.
	if got, err := db.Claim(ctx, "other", 10, time.Hour, false); err != nil || len(got) != 0 {
		t.Fatalf("another owner claimed a covered row: %v, %v", got, err)
	}
	if _, err := db.Pool().Exec(ctx, `DELETE FROM replicas`); err != nil {
		t.Fatal(err)
	}
	claimWaking(3, "third")
	if n := beats(); n != 1 {
		t.Fatalf("a claim with beat and no heartbeat stored: %d fresh heartbeats; want 1", n)
	}
}
