package postgres_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

func liveIDs(t *testing.T, db *postgres.DB, session string, to channels.Address) []string {
	t.Helper()
	ids, err := db.LiveMessages(context.Background(), session, to)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func TestLiveAnswerEndsWithTheReplyThatReplacesIt(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	to := reply("", 0, "").To
	claim := bot.Claim{Owner: "replica-1", Lease: time.Minute}
	user := agentcore.Message{Role: agentcore.RoleUser, Content: "hi", ExternalID: "u1"}
	answer := agentcore.Message{Role: agentcore.RoleAssistant, Content: "hello"}

	const session = "a/telegram:42:7"
	if _, err := db.Append(ctx, session, user); err != nil {
		t.Fatal(err)
	}
	for _, ids := range [][]string{{"100"}, {"100", "101"}} {
		if err := db.SaveLive(ctx, session, to, ids); err != nil {
			t.Fatal(err)
		}
	}
	if got := liveIDs(t, db, session, to); !slices.Equal(got, []string{"100", "101"}) {
		t.Fatalf("LiveMessages = %v, want the latest saved", got)
	}
	if got := liveIDs(t, db, session, channels.Address{Platform: "telegram", ChatID: "43"}); got != nil {
		t.Fatalf("another chat's LiveMessages = %v, want none", got)
	}
	// A reply without live messages (a notice sent as new) leaves them.
	if _, err := db.AppendReply(ctx, session, agentcore.Notice("n1", "note"), reply("", 0, "note"), claim); err != nil {
		t.Fatal(err)
	}
	if got := liveIDs(t, db, session, to); len(got) != 2 {
		t.Fatalf("a reply sent as new ended the live answer: %v", got)
	}
	m := reply("", 0, "hello")
	m.Replaces = []string{"100", "101"}
	out, err := db.InsertReply(ctx, session, 2, answer, m, bot.Claim{})
	if err != nil {
		t.Fatal(err)
	}
	if got := liveIDs(t, db, session, to); got != nil {
		t.Fatalf("LiveMessages after the reply replacing them = %v, want none", got)
	}
	rows, err := db.Claim(ctx, "replica-2", 10, time.Minute, false)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(rows, func(r bot.OutboxMessage) bool { return r.ID == out.Row.ID })
	if i < 0 || !slices.Equal(rows[i].Replaces, []string{"100", "101"}) {
		t.Fatalf("claimed rows %+v, want row %d replacing [100 101]", rows, out.Row.ID)
	}
	for _, r := range rows {
		if r.ID != out.Row.ID && r.Replaces != nil {
			t.Fatalf("row sent as new came back replacing %v", r.Replaces)
		}
	}

	// AppendReply (a failure's or a stop's notice) replaces them too, and
	// so does a plain Enqueue.
	for i, store := range []func(bot.OutboxMessage) error{
		func(m bot.OutboxMessage) error {
			_, err := db.AppendReply(ctx, session, agentcore.Notice("n2", "sorry"), m, claim)
			return err
		},
		func(m bot.OutboxMessage) error {
			m.Session = session
			_, err := db.Enqueue(ctx, m)
			return err
		},
	} {
		if err := db.SaveLive(ctx, session, to, []string{"200"}); err != nil {
			t.Fatal(err)
		}
		m := reply("", 0, "sorry")
		m.Replaces = []string{"200"}
		if err := store(m); err != nil {
			t.Fatal(err)
		}
		if got := liveIDs(t, db, session, to); got != nil {
			t.Fatalf("store %d: LiveMessages = %v after the reply replacing them", i, got)
		}
	}
}
