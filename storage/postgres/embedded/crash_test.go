package embedded_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres/embedded"
)

// A real PostgreSQL crash (kill -9 of a private server's postmaster) right
// after a reply is stored: the reply and its outbox row survive, as the
// user message does, so recovery finds nothing to answer again and the
// chat never sees the answer twice. The server's WAL writer is slowed so
// that a commit which did not wait for its flush would be lost.
func TestCrashKeepsAStoredReply(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills a PostgreSQL server")
	}
	ctx := context.Background()
	e, logs := startLogged(t, reachableTempDir(t))
	t.Cleanup(func() { _ = e.Stop(context.Background()) })
	db := openEmbedded(t, e)
	t.Cleanup(db.Close)
	// PostgreSQL's WAL writer flushes an unflushed commit at most
	// wal_writer_delay after its own last flush (0.2 s by default): ten
	// seconds leave only the commit's own flush to keep the reply.
	for _, sql := range []string{`ALTER SYSTEM SET wal_writer_delay = '10s'`, `SELECT pg_reload_conf()`} {
		if _, err := db.Pool().Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(300 * time.Millisecond) // the writer reads its configuration
	// The WAL writer also flushes whenever a commit fills a WAL page: start
	// a new WAL segment, so what follows (a few KB) stays inside its first
	// page and nothing but the commits' own flushes writes it.
	if _, err := db.Pool().Exec(ctx, `SELECT pg_switch_wal()`); err != nil {
		t.Fatal(err)
	}

	const session = "a/telegram:1"
	if _, err := db.Append(ctx, session, agentcore.Message{Role: agentcore.RoleUser, Content: "hi", ExternalID: "u1"}); err != nil {
		t.Fatal(err)
	}
	claim := bot.Claim{Owner: "replica-1", Lease: time.Minute}
	stored, err := db.InsertReply(ctx, session, 1, agentcore.Message{Role: agentcore.RoleAssistant, Content: "hello"},
		bot.OutboxMessage{To: channels.Address{Platform: "telegram", ChatID: "42", ThreadID: "7"}, Text: "hello"}, claim)
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
	if len(msgs) != 2 || msgs[0].Content != "hi" || msgs[1].Content != "hello" {
		t.Fatalf("session after the crash = %+v, want the user message and its reply", msgs)
	}
	var id int64
	if err := db.Pool().QueryRow(ctx, `SELECT id FROM outbox WHERE session_key = $1 AND source_seq = $2`,
		session, stored.Seq).Scan(&id); err != nil || id != stored.Row.ID {
		t.Fatalf("the reply's outbox row after the crash: id %d, %v; want %d", id, err, stored.Row.ID)
	}
	unfinished, err := db.Unfinished(ctx, bot.UnfinishedQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range unfinished {
		if u.Session == session && u.NeedsRun {
			t.Fatalf("Unfinished = %+v: %s needs a run again, its reply would be sent twice", unfinished, session)
		}
	}
	if err := db.MarkSentAll(ctx, []bot.Sent{{OutboxRow: stored.Row.Row(), PlatformMessageID: "900"}}); err != nil {
		t.Fatal(err)
	}
	var status string
	if err := db.Pool().QueryRow(ctx, `SELECT status FROM outbox WHERE id = $1`, id).Scan(&status); err != nil || status != "sent" {
		t.Errorf("the reply's row after its mark: %q, %v; want sent", status, err)
	}
}

// killServer kills e's postmaster with SIGKILL, as a crash would.
func killServer(t *testing.T, e *embedded.Server) {
	t.Helper()
	pid := postmasterPID(e)
	if pid == 0 {
		t.Fatal("no postmaster.pid")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
}
