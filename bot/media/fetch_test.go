package media_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot/media"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// attachment returns a document whose Open serves body and counts the
// bytes read from it.
func attachment(name string, body io.Reader, read *int64) channels.Attachment {
	return channels.Attachment{Kind: channels.KindDocument, Name: name, Open: func(context.Context) (io.ReadCloser, error) {
		return io.NopCloser(&counting{r: body, n: read}), nil
	}}
}

type counting struct {
	r io.Reader
	n *int64
}

func (c *counting) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	if c.n != nil {
		*c.n += int64(k)
	}
	return k, err
}

// stored counts the media rows and the large objects in db.
func stored(t *testing.T, db *postgres.DB) (rows, objects int) {
	t.Helper()
	ctx := context.Background()
	if err := db.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM media), (SELECT count(*) FROM pg_largeobject_metadata)`).Scan(&rows, &objects); err != nil {
		t.Fatal(err)
	}
	return rows, objects
}

func readBack(t *testing.T, db *postgres.DB, sha string) []byte {
	t.Helper()
	r, _, err := db.OpenMedia(context.Background(), sha)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestMediaFetchStoresOnce(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	body := "# Notes\n\nthe log says 3 errors\n"
	first, err := media.Fetch(ctx, attachment("../notes.md", strings.NewReader(body), nil), "", 1000, db)
	if err != nil {
		t.Fatal(err)
	}
	want := media.Stored{SHA256: first.SHA256, Name: "notes.md", Type: "text/markdown", Size: int64(len(body))}
	if first != want || len(first.SHA256) != 64 {
		t.Fatalf("Fetch = %+v, want %+v with a hex sha256", first, want)
	}
	second, err := media.Fetch(ctx, attachment("again.txt", strings.NewReader(body), nil), "", 1000, db)
	if err != nil || second.SHA256 != first.SHA256 || second.Name != "again.txt" || second.Type != "text/plain" {
		t.Fatalf("second Fetch = %+v, %v; want the same hash under its own name and type", second, err)
	}
	if rows, objects := stored(t, db); rows != 1 || objects != 1 {
		t.Fatalf("after the same file twice: %d rows, %d large objects; want 1, 1", rows, objects)
	}
	if got := readBack(t, db, first.SHA256); string(got) != body {
		t.Fatalf("OpenMedia = %q, want %q", got, body)
	}
}

func TestMediaFetchTooLarge(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	var read int64
	_, err := media.Fetch(ctx, attachment("big.bin", bytes.NewReader(make([]byte, 5_000_000)), &read), "", 2_000_000, db)
	if !errors.Is(err, media.ErrTooLarge) || !strings.Contains(err.Error(), "2 MB") {
		t.Fatalf("Fetch of 5 MB with a 2 MB limit = %v, want ErrTooLarge naming 2 MB", err)
	}
	if read > 2_000_001 {
		t.Fatalf("read %d bytes, want at most the limit + 1", read)
	}
	declared := channels.Attachment{Kind: channels.KindVideo, Name: "v.mp4", Size: 3_000_000, Open: func(context.Context) (io.ReadCloser, error) {
		t.Fatal("a file declared larger than the limit was downloaded")
		return nil, nil
	}}
	if _, err := media.Fetch(ctx, declared, "", 2_000_000, db); !errors.Is(err, media.ErrTooLarge) {
		t.Fatalf("Fetch of a declared 3 MB = %v, want ErrTooLarge", err)
	}
	exact, err := media.Fetch(ctx, attachment("exact.bin", bytes.NewReader(make([]byte, 2_000_000)), nil), "", 2_000_000, db)
	if err != nil || exact.Size != 2_000_000 {
		t.Fatalf("Fetch of exactly the limit = %+v, %v", exact, err)
	}
	if rows, objects := stored(t, db); rows != 1 || objects != 1 {
		t.Fatalf("%d rows, %d large objects; want only the file at the limit", rows, objects)
	}
}

// failing serves n bytes, then a broken connection.
type failing struct{ n int }

func (f *failing) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, io.ErrUnexpectedEOF
	}
	k := min(len(p), f.n)
	f.n -= k
	return k, nil
}

func TestMediaFetchTruncatedStoresNothing(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	_, err := media.Fetch(ctx, attachment("log.txt", &failing{n: 100_000}, nil), "", 1_000_000, db)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("Fetch of a truncated download = %v, want the reader's error", err)
	}
	if rows, objects := stored(t, db); rows != 0 || objects != 0 {
		t.Fatalf("after a truncated download: %d rows, %d large objects; want none", rows, objects)
	}
}

// pattern serves n bytes of a repeating, non-zero pattern without holding them.
type pattern struct{ n, off int64 }

func (p *pattern) Read(b []byte) (int, error) {
	if p.off >= p.n {
		return 0, io.EOF
	}
	k := int(min(int64(len(b)), p.n-p.off))
	for i := range k {
		b[i] = byte((p.off + int64(i)) % 251)
	}
	p.off += int64(k)
	return k, nil
}

// TestMediaFetch20MBStreams checks that a 20 MB download is never held
// whole: the live heap stays far below the file's size throughout. pgx
// copies every lowrite chunk into buffers it drops after each message (it
// shrinks any over 1 KB), so the bytes allocated in all are about twice the
// file; that is garbage collected as it goes, and what the limit is about,
// memory held at once, is measured by sampling the heap during the fetch.
func TestMediaFetch20MBStreams(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	const size = 20_000_000
	// Warm the pool's connection so its buffers are not counted.
	if _, err := media.Fetch(ctx, attachment("warm.bin", &pattern{n: 100_000}, nil), "", size, db); err != nil {
		t.Fatal(err)
	}
	// Collect often, so the samples show what is held, not garbage waiting.
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	base := heapLive()
	peak := base
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			peak = max(peak, heapLive())
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s, err := media.Fetch(ctx, attachment("big.bin", &pattern{n: size}, nil), "", size, db)
	runtime.ReadMemStats(&after)
	close(done)
	<-sampled
	if err != nil || s.Size != size {
		t.Fatalf("Fetch of 20 MB = %+v, %v", s, err)
	}
	t.Logf("Fetch of 20 MB: heap grew at most %d bytes; %d bytes allocated in all", peak-base, after.TotalAlloc-before.TotalAlloc)
	if grew := peak - base; grew > size/5 {
		t.Fatalf("the heap grew by %d bytes during a 20 MB fetch, want well under the file's size", grew)
	}
	r, _, err := db.OpenMedia(ctx, s.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n, err := io.Copy(&compare{t: t}, r)
	if err != nil || n != size {
		t.Fatalf("read back %d bytes, %v; want %d", n, err, size)
	}
}

// heapLive returns the bytes of heap objects, live or not yet swept (read
// without stopping the world).
func heapLive() uint64 {
	m := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(m)
	return m[0].Value.Uint64()
}

// compare checks that what is written is the pattern.
type compare struct {
	t   *testing.T
	off int64
}

func (c *compare) Write(b []byte) (int, error) {
	for i, v := range b {
		if want := byte((c.off + int64(i)) % 251); v != want {
			c.t.Fatalf("byte %d = %d, want %d", c.off+int64(i), v, want)
		}
	}
	c.off += int64(len(b))
	return len(b), nil
}
