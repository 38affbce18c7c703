package postgres_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/storage/postgres"
)

// A real PostgreSQL crash (kill -9 of a private server's postmaster) right
// after a reply commits without waiting for the flush: the user message it
// answered survives, the reply and its outbox row are gone, recovery finds
// the message unanswered, and a row that gets the lost row's id afterwards
// is not settled by the dispatcher's marks for the lost one.
func TestCrashLosesOnlyTheUnflushedReply(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills a PostgreSQL server")
	}
	ctx := context.Background()
	e, logs := startLogged(t, reachableTempDir(t))
	t.Cleanup(func() { _ = e.Stop(context.Background()) })
	db := openEmbedded(t, e)
	t.Cleanup(db.Close)
	// PostgreSQL's WAL writer flushes an unflushed commit at most
	// wal_writer_delay after its own last flush (0.2 s by default): give
	// the crash ten seconds to catch the reply, and start that clock with
	// an asynchronous commit the writer flushes now.
	for _, sql := range []string{`ALTER SYSTEM SET wal_writer_delay = '10s'`, `SELECT pg_reload_conf()`} {
		if _, err := db.Pool().Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(300 * time.Millisecond)                     // the writer reads its configuration
	if err := db.Heartbeat(ctx, "replica-1"); err != nil { // an asynchronous commit
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the writer flushes it
	// The WAL writer is also woken at once whenever a commit fills a WAL
	// page, and then flushes the full pages: had the reply's records
	// straddled a page boundary, the sequence's advance (logged before the
	// row) could survive while the commit is lost. Start a new WAL segment,
	// so what follows (a few KB) stays inside its first page.
	if _, err := db.Pool().Exec(ctx, `SELECT pg_switch_wal()`); err != nil {
		t.Fatal(err)
	}

	const session, other = "a/telegram:1", "a/telegram:2"
	if _, err := db.Append(ctx, session, agentcore.Message{Role: agentcore.RoleUser, Content: "hi", ExternalID: "u1"}); err != nil {
		t.Fatal(err)
	}
	claim := bot.Claim{Owner: "replica-1", Lease: time.Minute}
	lost, err := db.InsertReply(ctx, session, 1, agentcore.Message{Role: agentcore.RoleAssistant, Content: "hello"},
		reply("", 0, "hello"), claim)
	if err != nil {
		t.Fatal(err)
	}
	killServer(t, e)
	if err := answersWithin(e.URL(), 30*time.Second); err != nil {
		t.Fatalf("the server did not come back: %v\n%s", err, logs)
	}

	msgs, err := db.Load(ctx, session, 0) // retries the pool's connections to the dead server
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) == 2 {
		t.Fatalf("the crash kept the reply (%+v): the premise, that PostgreSQL loses a commit it did not flush, failed", msgs)
	}
	if len(msgs) != 1 || msgs[0].Content != "hi" {
		t.Fatalf("session after the crash = %+v, want the user message alone", msgs)
	}
	var rows int
	if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM outbox`).Scan(&rows); err != nil || rows != 0 {
		t.Fatalf("outbox rows after the crash = %d, %v; want none (lost with the reply)", rows, err)
	}
	unfinished, err := db.Unfinished(ctx, bot.UnfinishedQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(unfinished) != 1 || unfinished[0].Session != session || !unfinished[0].NeedsRun {
		t.Fatalf("Unfinished = %+v, want %s needing a run", unfinished, session)
	}

	// Another chat's reply now takes the lost row's id; the dispatcher
	// still holds the lost row and marks it sent.
	if _, err := db.Append(ctx, other, agentcore.Message{Role: agentcore.RoleUser, Content: "yo", ExternalID: "u2"}); err != nil {
		t.Fatal(err)
	}
	next, err := db.InsertReply(ctx, other, 1, agentcore.Message{Role: agentcore.RoleAssistant, Content: "hey"},
		reply("", 0, "hey"), claim)
	if err != nil {
		t.Fatal(err)
	}
	if next.Row.ID != lost.Row.ID {
		// The crash took the sequence's advance with the row (it was
		// logged in the same unflushed WAL), so the id comes round again.
		t.Fatalf("the next row got id %d, not the lost row's %d: the premise of the check below failed", next.Row.ID, lost.Row.ID)
	}
	if err := db.MarkSentAll(ctx, []bot.Sent{{OutboxRow: lost.Row.Row(), PlatformMessageID: "900"}}); err != nil {
		t.Fatal(err)
	}
	var status string
	if err := db.Pool().QueryRow(ctx, `SELECT status FROM outbox WHERE id = $1`, next.Row.ID).Scan(&status); err != nil || status != "pending" {
		t.Errorf("the next row after the lost one's mark: %q, %v; want pending", status, err)
	}
}

// killServer kills e's postmaster with SIGKILL, as a crash would.
func killServer(t *testing.T, e *postgres.Embedded) {
	t.Helper()
	pid := postmasterPID(e)
	if pid == 0 {
		t.Fatal("no postmaster.pid")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
}
