package bot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// databaseSwitch turns connections to p's test database off and on, as a
// PostgreSQL that went away would: existing connections are terminated and
// new ones refused.
type databaseSwitch struct {
	t     *testing.T
	admin *pgx.Conn
	name  string
	ident string
}

func newDatabaseSwitch(t *testing.T, p *pipeline) *databaseSwitch {
	t.Helper()
	ctx := context.Background()
	var name string
	if err := p.db.Pool().QueryRow(ctx, `SELECT current_database()`).Scan(&name); err != nil {
		t.Fatal(err)
	}
	admin, err := pgx.Connect(ctx, pgtest.ServerURL())
	if err != nil {
		t.Fatal(err)
	}
	s := &databaseSwitch{t: t, admin: admin, name: name, ident: pgx.Identifier{name}.Sanitize()}
	t.Cleanup(func() {
		s.up()
		_ = admin.Close(context.Background())
	})
	return s
}

func (s *databaseSwitch) exec(sql string, args ...any) {
	s.t.Helper()
	if _, err := s.admin.Exec(context.Background(), sql, args...); err != nil {
		s.t.Fatalf("%s: %v", sql, err)
	}
}

// down refuses new connections to the database and ends every open one.
// pg_terminate_backend only signals a backend, and a connection that was
// half-way through its start-up when the database was closed still comes
// up, so it repeats until the database has had no backend for a while.
func (s *databaseSwitch) down() {
	s.t.Helper()
	s.exec(`ALTER DATABASE ` + s.ident + ` ALLOW_CONNECTIONS false`)
	deadline := time.Now().Add(10 * time.Second)
	for quiet := 0; quiet < 3; {
		var left int
		err := s.admin.QueryRow(context.Background(), `
			WITH ended AS (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			               WHERE datname = $1 AND pid <> pg_backend_pid())
			SELECT count(*) FROM ended`, s.name).Scan(&left)
		if err != nil {
			s.t.Fatalf("terminate the connections to %s: %v", s.name, err)
		}
		if left == 0 {
			quiet++
		} else {
			quiet = 0
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("connections to %s keep coming back", s.name)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *databaseSwitch) up() {
	s.t.Helper()
	s.exec(`ALTER DATABASE ` + s.ident + ` ALLOW_CONNECTIONS true`)
}

// TestHandleLeavesMessageForRedeliveryWhilePostgresIsDown: a message that
// cannot be stored is reported to the channel (so it is not confirmed),
// leaves no dedupe mark behind, and its redelivery is stored and answered
// once.
func TestHandleLeavesMessageForRedeliveryWhilePostgresIsDown(t *testing.T) {
	p := newPipeline(t, bot.Limits{User: bot.Rate{Count: 1, Per: time.Hour}}, bot.AccessOptions{})
	db := newDatabaseSwitch(t, p)
	ctx := context.Background()
	in := msg("d1", "u1", "keep me")

	db.down()
	start := time.Now()
	err := p.router.Handle(ctx, in)
	t.Logf("Handle with PostgreSQL down returned after %s: %v", time.Since(start).Round(time.Millisecond), err)
	if err == nil {
		t.Fatal("Handle returned nil for a message it could not store")
	}
	first, err := p.rdb.FirstSeen(ctx, "in:test:"+in.ExternalID, time.Minute)
	if err != nil || !first {
		t.Errorf("a dedupe mark was set for the unsaved message (first=%v, err=%v)", first, err)
	}

	db.up()
	// Redelivered: stored and answered, though the user's limit is one
	// message an hour (the first attempt counted already).
	if err := p.router.Handle(ctx, in); err != nil {
		t.Fatalf("redelivery: %v", err)
	}
	if got := p.ch.WaitFor(t, "d1", 1); !strings.Contains(got[0].Text, "echo: keep me") {
		t.Fatalf("reply = %q", got[0].Text)
	}
	// Delivered again after it was stored: nothing new.
	if err := p.router.Handle(ctx, in); err != nil {
		t.Fatalf("second redelivery: %v", err)
	}
	time.Sleep(300 * time.Millisecond)
	if n := p.ch.Count("d1"); n != 1 {
		t.Errorf("chat got %d messages, want the one answer", n)
	}
	if n := len(p.llm.Requests()); n != 1 {
		t.Errorf("LLM called %d times, want 1", n)
	}
}

// TestHandleStoresDespiteCancelledContext: shutdown or a lost leadership
// cancels the context of a Handle in flight; the save still happens.
func TestHandleStoresDespiteCancelledContext(t *testing.T) {
	p := newPipeline(t, bot.Limits{}, bot.AccessOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	in := msg("d2", "u2", "saved anyway")
	if err := p.router.Handle(ctx, in); err != nil {
		t.Fatalf("Handle with a cancelled context: %v", err)
	}
	key := agentcore.SessionKey{Agent: "default", Scope: in.Address().String()}.String()
	msgs, err := p.db.Load(context.Background(), key, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) == 0 || msgs[0].Content != "saved anyway" || msgs[0].ExternalID != in.ExternalID {
		t.Fatalf("stored session = %+v, want the message", msgs)
	}
	if got := p.ch.WaitFor(t, "d2", 1); !strings.Contains(got[0].Text, "echo: saved anyway") {
		t.Fatalf("reply = %q", got[0].Text)
	}
}

// TestRedeliveredStoredMessageIsRun: a crash after the save but before the
// run leaves a stored, unanswered message; its redelivery is a duplicate
// for PostgreSQL, but still gets its run.
func TestRedeliveredStoredMessageIsRun(t *testing.T) {
	p := newPipeline(t, bot.Limits{}, bot.AccessOptions{})
	ctx := context.Background()
	in := msg("d3", "u3", "stored before the crash")
	key := agentcore.SessionKey{Agent: "default", Scope: in.Address().String()}.String()
	if _, err := p.db.Append(ctx, key, agentcore.Message{Role: agentcore.RoleUser, Content: in.Text, ExternalID: in.ExternalID}); err != nil {
		t.Fatal(err)
	}
	if err := p.router.Handle(ctx, in); err != nil {
		t.Fatalf("redelivery: %v", err)
	}
	if got := p.ch.WaitFor(t, "d3", 1); !strings.Contains(got[0].Text, "echo: stored before the crash") {
		t.Fatalf("reply = %q", got[0].Text)
	}
	if got := p.ch.WaitFor(t, "d3", 1); !strings.Contains(got[0].Text, "history: 1 user messages") {
		t.Errorf("reply = %q, want the message stored once", got[0].Text)
	}
}
