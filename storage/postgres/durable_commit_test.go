package postgres_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// recordCommitModes makes every insert into messages and outbox note, when
// its transaction commits, the synchronous_commit setting the commit uses:
// a deferred constraint trigger fires just before the commit record is
// written. It returns a function that reads the notes, as
// "table:text:setting".
func recordCommitModes(t *testing.T, db *postgres.DB) func() []string {
	t.Helper()
	ctx := context.Background()
	for _, sql := range []string{
		`CREATE TABLE commit_modes (id bigserial PRIMARY KEY, note text NOT NULL)`,
		`CREATE FUNCTION note_commit_mode() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			INSERT INTO commit_modes (note) VALUES (TG_TABLE_NAME || ':' ||
				coalesce(to_jsonb(NEW)->>'content', to_jsonb(NEW)->>'text') || ':' ||
				current_setting('synchronous_commit'));
			RETURN NULL;
		END $$`,
		`CREATE CONSTRAINT TRIGGER note_commit_mode AFTER INSERT ON messages
			DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION note_commit_mode()`,
		`CREATE CONSTRAINT TRIGGER note_commit_mode AFTER INSERT ON outbox
			DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION note_commit_mode()`,
	} {
		if _, err := db.Pool().Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	return func() []string {
		t.Helper()
		return column[string](t, ctx, db, `SELECT note FROM commit_modes ORDER BY id`)
	}
}

// A reply and its outbox row are durable before the reply is sent: they
// commit waiting for the WAL flush, as what users send does, so a
// PostgreSQL crash never loses a reply the chat has seen and recovery never
// answers its user message a second time.
func TestRepliesAreDurableBeforeTheyAreSent(t *testing.T) {
	ctx := context.Background()
	// One connection, so the last check runs where the replies ran.
	db := pgtest.OpenWith(t, ctx, postgres.Options{MaxConns: 1})
	notes := recordCommitModes(t, db)
	const session = "a/telegram:42"
	user := func(text string) agentcore.Message {
		return agentcore.Message{Role: agentcore.RoleUser, Content: text, ExternalID: text}
	}
	answer := func(text string) agentcore.Message {
		return agentcore.Message{Role: agentcore.RoleAssistant, Content: text}
	}
	claim := bot.Claim{Owner: "replica-1", Lease: time.Minute}

	if _, err := db.Append(ctx, session, user("u1")); err != nil {
		t.Fatal(err)
	}
	if _, err := db.InsertReply(ctx, session, 1, answer("r1"), reply("", 0, "o1"), claim); err != nil {
		t.Fatal(err)
	}
	// InsertReply's slow path: a user message arrived after the run's view.
	for _, m := range []string{"u2", "u3"} {
		if _, err := db.Append(ctx, session, user(m)); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := db.InsertReply(ctx, session, 3, answer("r2"), reply("", 0, "o2"), claim); err != nil || out.Moved != 1 {
		t.Fatalf("InsertReply behind a new message = %+v, %v; want 1 moved", out, err)
	}
	if _, err := db.AppendReply(ctx, session, answer("r3"), reply("", 0, "o3"), bot.Claim{}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Append(ctx, session, user("u4")); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Enqueue(ctx, reply("", 0, "notice")); err != nil {
		t.Fatal(err)
	}

	want := []string{
		"messages:u1:on",
		"messages:r1:on", "outbox:o1:on",
		"messages:u2:on", "messages:u3:on",
		"messages:r2:on", "outbox:o2:on",
		"messages:r3:on", "outbox:o3:on",
		"messages:u4:on",
		"outbox:notice:on",
	}
	// A statement's CTEs insert in no set order: compare the notes sorted.
	got := notes()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("commit modes:\n got %q\nwant %q", got, want)
	}
	var setting string
	if err := db.Pool().QueryRow(ctx, `SELECT current_setting('synchronous_commit')`).Scan(&setting); err != nil {
		t.Fatal(err)
	}
	if setting != "on" {
		t.Errorf("synchronous_commit after the replies = %q, want on", setting)
	}
}
