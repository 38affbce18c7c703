package postgres_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// The pictures of a user message survive Append, both paths of Insert and
// Load, as references: the column holds keys and types, never bytes.
func TestHistoryKeepsImageReferences(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	s := "a/telegram:7"
	png := agentcore.Image{SHA256: strings.Repeat("ab", 32), Type: "image/png"}
	jpeg := agentcore.Image{SHA256: strings.Repeat("cd", 32), Type: "image/jpeg"}
	withData := func(im agentcore.Image) agentcore.Image {
		im.Data = []byte("PIXELS-MUST-NOT-BE-STORED")
		return im
	}

	last, err := db.Append(ctx, s, agentcore.Message{Role: agentcore.RoleUser, Content: "look", Images: []agentcore.Image{withData(png), jpeg}})
	if err != nil {
		t.Fatal(err)
	}
	// Fast path: nothing after last.
	last, _, err = db.Insert(ctx, s, last, agentcore.Message{Role: agentcore.RoleUser, Content: "and this", Images: []agentcore.Image{jpeg}})
	if err != nil {
		t.Fatal(err)
	}
	// Slow path: a user message arrived after `last` and moves behind.
	if _, err := db.Append(ctx, s, agentcore.Message{Role: agentcore.RoleUser, Content: "meanwhile", Images: []agentcore.Image{png}}); err != nil {
		t.Fatal(err)
	}
	if _, moved, err := db.Insert(ctx, s, last, agentcore.Message{Role: agentcore.RoleAssistant, Content: "nice"}); err != nil || moved != 1 {
		t.Fatalf("Insert = moved %d, %v; want 1 moved", moved, err)
	}

	got, err := db.Load(ctx, s, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []agentcore.Message{
		{Role: agentcore.RoleUser, Content: "look", Seq: 1, Images: []agentcore.Image{png, jpeg}},
		{Role: agentcore.RoleUser, Content: "and this", Seq: 2, Images: []agentcore.Image{jpeg}},
		{Role: agentcore.RoleAssistant, Content: "nice", Seq: 3},
		{Role: agentcore.RoleUser, Content: "meanwhile", Seq: 4, Images: []agentcore.Image{png}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Load\n got %#v\nwant %#v", got, want)
	}

	raw := column[string](t, ctx, db, `SELECT coalesce(images::text, 'NULL') FROM messages WHERE session_key = $1 ORDER BY seq`, s)
	if raw[2] != "NULL" {
		t.Errorf("a message without images stores %s, want NULL", raw[2])
	}
	if strings.Contains(strings.Join(raw, " "), "PIXELS") || strings.Contains(raw[0], "data") {
		t.Errorf("images column holds more than references: %q", raw)
	}
	if want := `[{"type": "image/png", "sha256": "` + png.SHA256 + `"}, {"type": "image/jpeg", "sha256": "` + jpeg.SHA256 + `"}]`; raw[0] != want {
		t.Errorf("images column = %s\nwant %s", raw[0], want)
	}
}
