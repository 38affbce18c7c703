package postgres_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/media"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// putMedia stores body as the store's callers do: seal describes it once
// body is drained.
func putMedia(t *testing.T, db *postgres.DB, body string) media.Stored {
	t.Helper()
	return putChatMedia(t, db, body, "")
}

// putChatMedia stores body as a file sent in chat ("": in none).
func putChatMedia(t *testing.T, db *postgres.DB, body, chat string) media.Stored {
	t.Helper()
	sum := sha256.Sum256([]byte(body))
	s := media.Stored{SHA256: hex.EncodeToString(sum[:]), Type: "text/plain", Size: int64(len(body)), Chat: chat}
	if err := db.PutMedia(context.Background(), strings.NewReader(body), func() media.Stored { return s }); err != nil {
		t.Fatal(err)
	}
	return s
}

func countMedia(t *testing.T, db *postgres.DB) (rows, objects int) {
	t.Helper()
	if err := db.Pool().QueryRow(context.Background(),
		`SELECT (SELECT count(*) FROM media), (SELECT count(*) FROM pg_largeobject_metadata)`).Scan(&rows, &objects); err != nil {
		t.Fatal(err)
	}
	return rows, objects
}

func TestMediaOpenAndPrune(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	old := putMedia(t, db, "old file")
	if _, err := db.Pool().Exec(ctx, `UPDATE media SET created_at = now() - interval '40 days' WHERE sha256 = $1`, old.SHA256); err != nil {
		t.Fatal(err)
	}
	fresh := putMedia(t, db, "fresh file")

	r, got, err := db.OpenMedia(ctx, fresh.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(r)
	if err != nil || string(data) != "fresh file" || got != fresh {
		t.Fatalf("OpenMedia = %q, %+v, %v; want the fresh file and %+v", data, got, err, fresh)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}

	n, err := db.PruneMedia(ctx, time.Now().Add(-30*24*time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("PruneMedia = %d, %v; want 1", n, err)
	}
	if rows, objects := countMedia(t, db); rows != 1 || objects != 1 {
		t.Fatalf("after prune: %d rows, %d large objects; want the fresh one only", rows, objects)
	}
	if _, _, err := db.OpenMedia(ctx, old.SHA256); !errors.Is(err, bot.ErrNotFound) {
		t.Fatalf("OpenMedia of a pruned file = %v, want ErrNotFound", err)
	}
}

func TestMediaSentAgainIsKeptLonger(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	s := putMedia(t, db, "same bytes")
	if _, err := db.Pool().Exec(ctx, `UPDATE media SET created_at = now() - interval '40 days'`); err != nil {
		t.Fatal(err)
	}
	putMedia(t, db, "same bytes")
	if rows, objects := countMedia(t, db); rows != 1 || objects != 1 {
		t.Fatalf("the same file twice: %d rows, %d large objects; want 1, 1", rows, objects)
	}
	if n, err := db.PruneMedia(ctx, time.Now().Add(-30*24*time.Hour)); err != nil || n != 0 {
		t.Fatalf("PruneMedia after the file was sent again = %d, %v; want 0", n, err)
	}
	if _, err := db.Pool().Exec(ctx, `DELETE FROM media WHERE sha256 = $1`, s.SHA256); err != nil {
		t.Fatal(err)
	}
	if rows, objects := countMedia(t, db); rows != 0 || objects != 0 {
		t.Fatalf("after deleting the row by hand: %d rows, %d large objects; want none", rows, objects)
	}
}
