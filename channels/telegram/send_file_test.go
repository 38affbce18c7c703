package telegram_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

// memFile is a channels.File over body that counts its opens.
func memFile(kind, name string, body []byte, opens *atomic.Int32) *channels.File {
	return &channels.File{Kind: kind, Name: name, Type: "application/octet-stream", Size: int64(len(body)),
		Open: func(context.Context) (io.ReadCloser, error) {
			opens.Add(1)
			return io.NopCloser(bytes.NewReader(body)), nil
		}}
}

func onlyUpload(t *testing.T, fake *telegramtest.Server, chat int64) telegramtest.Upload {
	t.Helper()
	ups := fake.Uploads(chat)
	if len(ups) != 1 {
		t.Fatalf("uploads to %d = %+v, want one", chat, ups)
	}
	return ups[0]
}

func TestSendPhotoUploadsTheBytes(t *testing.T) {
	h := pollingHarness(t)
	ctx := h.Ctx()
	_, asked := h.fake.PushMessage(telegramtest.Incoming{ChatID: -300, ChatType: "supergroup", ThreadID: 7, UserID: 3, Text: "chart please"})
	body := []byte("\x89PNG\r\n\x1a\n not really a chart")
	var opens atomic.Int32
	to := channels.Address{Platform: "telegram", ChatID: "-300", ThreadID: "7"}
	id, err := h.ch.Send(ctx, channels.Outbound{To: to, Text: "the **chart** you asked for", ReplyTo: strconv.Itoa(asked),
		File:    memFile(channels.KindPhoto, "chart.png", body, &opens),
		Buttons: [][]channels.Button{{{Label: "Again", Data: "again"}}}})
	if err != nil {
		t.Fatal(err)
	}
	up := onlyUpload(t, h.fake, -300)
	sum := sha256.Sum256(body)
	if up.Method != "sendPhoto" || !bytes.Equal(up.Body, body) || up.SHA256 != hex.EncodeToString(sum[:]) ||
		up.Size != int64(len(body)) || up.FileName != "chart.png" {
		t.Errorf("upload = %+v, want the photo's bytes as chart.png", up)
	}
	if up.Caption != "the <b>chart</b> you asked for" || up.ParseMode != "HTML" || up.ThreadID != 7 || up.ReplyTo != asked {
		t.Errorf("caption %q (%s), thread %d, reply to %d", up.Caption, up.ParseMode, up.ThreadID, up.ReplyTo)
	}
	if len(up.Buttons) != 1 || up.Buttons[0][0].CallbackData != "again" {
		t.Errorf("buttons = %+v, want them on the photo", up.Buttons)
	}
	if id != strconv.Itoa(up.MessageID) || opens.Load() != 1 {
		t.Errorf("id %s (upload %d), opened %d times", id, up.MessageID, opens.Load())
	}
}

func TestSendVoiceAndDocument(t *testing.T) {
	h := pollingHarness(t)
	to := channels.Address{Platform: "telegram", ChatID: "301"}
	var opens atomic.Int32
	for _, c := range []struct{ kind, method string }{
		{channels.KindVoice, "sendVoice"}, {channels.KindDocument, "sendDocument"}, {"video", "sendDocument"},
	} {
		body := []byte("bytes of a " + c.kind)
		if _, err := h.ch.Send(h.Ctx(), channels.Outbound{To: to, File: memFile(c.kind, c.kind+".bin", body, &opens)}); err != nil {
			t.Fatalf("%s: %v", c.kind, err)
		}
		ups := h.fake.Uploads(301)
		up := ups[len(ups)-1]
		if up.Method != c.method || !bytes.Equal(up.Body, body) || up.Caption != "" {
			t.Errorf("%s went out as %+v, want %s without a caption", c.kind, up, c.method)
		}
	}
}

func TestLongCaptionFollowsAsText(t *testing.T) {
	h := pollingHarness(t)
	long := strings.Repeat("word ", 300) // 1500 characters
	var opens atomic.Int32
	id, err := h.ch.Send(h.Ctx(), channels.Outbound{To: channels.Address{Platform: "telegram", ChatID: "302"}, Text: long,
		File: memFile(channels.KindDocument, "report.txt", []byte("report"), &opens)})
	if err != nil {
		t.Fatal(err)
	}
	up := onlyUpload(t, h.fake, 302)
	msgs := h.fake.Messages(302)
	if up.Caption != "" || len(msgs) != 2 || msgs[1].File != "" || msgs[1].Visible != strings.TrimSpace(long) {
		t.Fatalf("caption %q, messages %+v; want the file without a caption, then the text", up.Caption, msgs)
	}
	if id != strconv.Itoa(msgs[1].ID) {
		t.Errorf("id = %s, want the following text's %d", id, msgs[1].ID)
	}
}

func TestFileOverTheLimitIsRefusedUnread(t *testing.T) {
	h := pollingHarness(t)
	var opened atomic.Bool
	for _, c := range []struct {
		kind string
		size int64
	}{{channels.KindPhoto, 10<<20 + 1}, {channels.KindDocument, 50<<20 + 1}} {
		f := &channels.File{Kind: c.kind, Name: "big", Size: c.size, Open: func(context.Context) (io.ReadCloser, error) {
			opened.Store(true)
			return nil, errors.New("must not be opened")
		}}
		_, err := h.ch.Send(h.Ctx(), channels.Outbound{To: channels.Address{Platform: "telegram", ChatID: "303"}, File: f})
		var tooLarge *channels.FileTooLargeError
		if !errors.As(err, &tooLarge) || !errors.Is(err, channels.ErrPermanent) || tooLarge.Size != c.size {
			t.Errorf("%s of %d bytes: %v, want a permanent FileTooLargeError", c.kind, c.size, err)
		}
	}
	if opened.Load() || h.fake.Requests("sendPhoto")+h.fake.Requests("sendDocument") != 0 {
		t.Error("an over-limit file was opened or sent")
	}
}

func TestFileUploadWaitsOut429(t *testing.T) {
	h := pollingHarness(t)
	h.fake.Fail("sendDocument", 429, 1, 1)
	body := []byte("sent after the wait")
	var opens atomic.Int32
	start := time.Now()
	_, err := h.ch.Send(h.Ctx(), channels.Outbound{To: channels.Address{Platform: "telegram", ChatID: "304"}, Text: "here",
		File: memFile(channels.KindDocument, "a.txt", body, &opens)})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < time.Second {
		t.Errorf("sent again after %v, want retry_after (1s) waited out", took)
	}
	if up := onlyUpload(t, h.fake, 304); !bytes.Equal(up.Body, body) || opens.Load() != 2 {
		t.Errorf("upload %q after %d opens, want the whole file from a second open", up.Body, opens.Load())
	}
	if early := h.fake.TooEarly(304); len(early) != 0 {
		t.Errorf("%d calls before retry_after passed", len(early))
	}
}

// pattern is a reader of n generated bytes: a large file not held anywhere.
type pattern struct{ n, at int64 }

func (p *pattern) Read(b []byte) (int, error) {
	if p.at >= p.n {
		return 0, io.EOF
	}
	k := min(int64(len(b)), p.n-p.at)
	for i := range k {
		x := p.at + i
		b[i] = byte(x*7 + x>>9)
	}
	p.at += k
	return int(k), nil
}

func (p *pattern) Close() error { return nil }

func heapLive() uint64 {
	m := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(m)
	return m[0].Value.Uint64()
}

// A 20 MB document is streamed to the Bot API, not held in memory.
func TestDocument20MBUploadStreams(t *testing.T) {
	h := pollingHarness(t)
	const size = 20_000_000
	sum := sha256.New()
	if _, err := io.Copy(sum, &pattern{n: size}); err != nil {
		t.Fatal(err)
	}
	f := &channels.File{Kind: channels.KindDocument, Name: "big.bin", Size: size,
		Open: func(context.Context) (io.ReadCloser, error) { return &pattern{n: size}, nil }}
	to := channels.Address{Platform: "telegram", ChatID: "305"}
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	base := heapLive()
	peak := base
	done, sampled := make(chan struct{}), make(chan struct{})
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
	_, err := h.ch.Send(h.Ctx(), channels.Outbound{To: to, File: f})
	close(done)
	<-sampled
	if err != nil {
		t.Fatal(err)
	}
	up := onlyUpload(t, h.fake, 305)
	if up.Size != size || up.SHA256 != hex.EncodeToString(sum.Sum(nil)) {
		t.Fatalf("received %d bytes with SHA-256 %s, want the 20 MB file", up.Size, up.SHA256)
	}
	// The fake keeps the first telegramtest.KeptUploadBytes of it.
	t.Logf("20 MB upload: heap grew at most %d bytes", peak-base)
	// Half the file: a whole copy (20 MB) cannot hide under it, while the
	// garbage of a busy process's other goroutines can reach a few MB.
	if grew := peak - base; grew > size/2 {
		t.Fatalf("the heap grew by %d bytes during a 20 MB upload, want well under the file's size (a whole copy would be 20 MB)", grew)
	}
}

// A file longer than its declared size is cut off at the platform's
// limit, not sent whole.
func TestFileLongerThanDeclaredIsRefused(t *testing.T) {
	h := pollingHarness(t)
	f := &channels.File{Kind: channels.KindPhoto, Name: "liar.jpg", Size: 100,
		Open: func(context.Context) (io.ReadCloser, error) { return &pattern{n: 10<<20 + 100}, nil }}
	_, err := h.ch.Send(h.Ctx(), channels.Outbound{To: channels.Address{Platform: "telegram", ChatID: "306"}, File: f})
	if !errors.Is(err, channels.ErrFileTooLarge) {
		t.Errorf("Send = %v, want ErrFileTooLarge", err)
	}
	if ups := h.fake.Uploads(306); len(ups) != 0 {
		t.Errorf("uploaded %+v", ups)
	}
}
