package channeltest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/switchboard-chat/switchboard/channels"
)

// ReadAttachment opens a and returns all its bytes, failing t when it
// cannot.
func ReadAttachment(ctx context.Context, t testing.TB, a channels.Attachment) []byte {
	t.Helper()
	if a.Open == nil {
		t.Fatalf("attachment %+v has no Open", a)
	}
	rc, err := a.Open(ctx)
	if err != nil {
		t.Fatalf("Open %s: %v", a.Name, err)
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %s: %v", a.Name, err)
	}
	return got
}

// WantBody opens a and checks it returns exactly want.
func WantBody(ctx context.Context, t testing.TB, a channels.Attachment, want []byte) {
	t.Helper()
	if got := ReadAttachment(ctx, t, a); !bytes.Equal(got, want) {
		t.Errorf("Open %s returned %q, want %q", a.Name, got, want)
	}
}

// CountingServer is a server answering with h that counts the requests
// it gets; it is closed when t ends.
func CountingServer(t testing.TB, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// Elsewhere is a host no file may be fetched from or sent to: a test
// wants its count to stay zero, which shows that a link or redirect there
// was refused before any request, bot token or byte left.
func Elsewhere(t testing.TB) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	return CountingServer(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("not yours")) })
}
