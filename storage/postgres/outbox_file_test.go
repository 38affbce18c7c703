package postgres_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// TestOutboxFileRoundTrip stores a file on a row through each way a row
// is written and checks that Claim hands it back as it was given.
func TestOutboxFileRoundTrip(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	file := func(name string) *bot.OutboxFile {
		return &bot.OutboxFile{SHA256: "ab12", Kind: channels.KindDocument, Name: name, Type: "application/pdf", Size: 60_000_000}
	}
	plain := reply("", 0, "a caption")
	plain.File = file("report.pdf")
	if _, err := db.Enqueue(ctx, plain); err != nil {
		t.Fatal(err)
	}
	// Written for nobody, so Claim below gets it.
	viaClaimed := reply("", 0, "")
	viaClaimed.File = file("bad\x00name.pdf")
	if _, _, err := db.EnqueueClaimed(ctx, viaClaimed, bot.Claim{}); err != nil {
		t.Fatal(err)
	}
	session := "a/telegram:42"
	if _, err := db.Append(ctx, session, agentcore.Message{Role: agentcore.RoleUser, Content: "make a report"}); err != nil {
		t.Fatal(err)
	}
	asReply := reply("", 0, "here it is")
	asReply.File = file("reply.pdf")
	if _, err := db.AppendReply(ctx, session, agentcore.Message{Role: agentcore.RoleAssistant, Content: "here it is"}, asReply, bot.Claim{}); err != nil {
		t.Fatal(err)
	}
	text := reply("", 0, "just text")
	if _, err := db.Enqueue(ctx, text); err != nil {
		t.Fatal(err)
	}
	got, err := db.Claim(ctx, "r1", 10, time.Minute, false)
	if err != nil || len(got) != 4 {
		t.Fatalf("Claim = %d rows, %v; want 4", len(got), err)
	}
	want := []*bot.OutboxFile{file("report.pdf"), file("bad\uFFFDname.pdf"), file("reply.pdf"), nil}
	for i, m := range got {
		if !reflect.DeepEqual(m.File, want[i]) {
			t.Errorf("row %d (%q): File = %+v, want %+v", i, m.Text, m.File, want[i])
		}
	}
}
