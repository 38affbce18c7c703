package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/bot/media"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// Agents with vision read a picture's bytes and type from the media store,
// and never more than media.max_bytes of it.
func TestStoredImagesLoadFromTheMediaStore(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	pic := []byte("\x89PNG\r\n\x1a\nnot-really-pixels")
	sum := sha256.Sum256(pic)
	st := media.Stored{SHA256: hex.EncodeToString(sum[:]), Type: "image/png", Size: int64(len(pic))}
	if err := db.PutMedia(ctx, bytes.NewReader(pic), func() media.Stored { return st }); err != nil {
		t.Fatal(err)
	}
	typ, data, err := storedImages{db: db, maxBytes: 1 << 20}.LoadImage(ctx, st.SHA256)
	if err != nil || typ != "image/png" || !bytes.Equal(data, pic) {
		t.Fatalf("LoadImage = %q, %q, %v; want the stored bytes and type", typ, data, err)
	}
	if _, _, err := (storedImages{db: db, maxBytes: 4}).LoadImage(ctx, st.SHA256); err == nil || !strings.Contains(err.Error(), "media.max_bytes") {
		t.Errorf("LoadImage over the limit = %v, want an error naming media.max_bytes", err)
	}
	if _, _, err := (storedImages{db: db, maxBytes: 1 << 20}).LoadImage(ctx, strings.Repeat("0", 64)); err == nil {
		t.Error("LoadImage of an unknown key succeeded")
	}
}
