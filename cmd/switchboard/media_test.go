package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot/media"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/config"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// TestMediaPruningKeepsMediaKeep: the media pass deletes what was stored
// longer than retention.media (media.keep, as Load settles it) ago and
// keeps the rest.
func TestMediaPruningKeepsMediaKeep(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	d := &daemon{cfg: &config.Config{Media: config.Media{MaxBytes: 1000}, Retention: config.Retention{Media: 30 * 24 * time.Hour}},
		st: &stores{db: db}, log: slog.New(slog.DiscardHandler)}
	put := func(body string) media.Stored {
		a := channels.Attachment{Kind: channels.KindDocument, Name: "x.txt", Open: func(context.Context) (io.ReadCloser, error) {
			return io.NopCloser(strings.NewReader(body)), nil
		}}
		s, err := media.Fetch(ctx, a, "", d.cfg.Media.MaxBytes, d.mediaReceiver().Store)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	old, fresh := put("sent last year"), put("sent today")
	if _, err := db.Pool().Exec(ctx, `UPDATE media SET created_at = now() - interval '31 days' WHERE sha256 = $1`, old.SHA256); err != nil {
		t.Fatal(err)
	}
	if p := d.prunings(); len(p) != 1 || p[0].What != "media" {
		t.Fatalf("prunings = %+v, want only media's", p)
	}
	if n, err := d.mediaPruning().Once(ctx); err != nil || n != 1 {
		t.Fatalf("pruning = %d, %v; want 1", n, err)
	}
	var left []string
	rows, err := db.Pool().Query(ctx, `SELECT sha256 FROM media`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		left = append(left, s)
	}
	if len(left) != 1 || left[0] != fresh.SHA256 {
		t.Fatalf("left %v, want only the fresh one", left)
	}
	d.cfg.Retention = config.Retention{Media: 0, Messages: 90 * 24 * time.Hour}
	if p := d.prunings(); len(p) != 1 || p[0].What != "messages" {
		t.Errorf("prunings with retention.media 0 (keep) = %+v, want only messages'", p)
	}
}
