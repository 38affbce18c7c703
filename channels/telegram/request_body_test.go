package telegram

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
)

// The library streams its forms; what reaches the Bot API must be one
// request with a Content-Length for a message, and a whole (chunked)
// upload for a file larger than the read-ahead.
func TestRequestsGoOutWithTheirLength(t *testing.T) {
	type seen struct {
		path     string
		length   int64
		chunked  bool
		body     []byte
		bodyRead error
	}
	var (
		mu  sync.Mutex
		got []seen
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seen{r.URL.Path, r.ContentLength, len(r.TransferEncoding) > 0, body, err})
		mu.Unlock()
		_, _ = io.WriteString(w, `{"ok":true,"result":{"message_id":7,"chat":{"id":1},"date":1}}`)
	}))
	defer srv.Close()

	b, err := bot.New("123:abc", bot.WithServerURL(srv.URL), bot.WithSkipGetMe(),
		bot.WithHTTPClient(time.Second, &pollClient{http: srv.Client()}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 1, Text: "hello there"}); err != nil {
		t.Fatal(err)
	}
	upload := bytes.Repeat([]byte("0123456789abcdef"), sendAheadLimit/16+1)
	if _, err := b.SendDocument(ctx, &bot.SendDocumentParams{ChatID: 1,
		Document: &models.InputFileUpload{Filename: "big.txt", Data: bytes.NewReader(upload)}}); err != nil {
		t.Fatal(err)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("server saw %d requests, want 2", len(got))
	}
	msg, doc := got[0], got[1]
	if !strings.HasSuffix(msg.path, "/sendMessage") || msg.chunked || msg.length != int64(len(msg.body)) ||
		!bytes.Contains(msg.body, []byte("hello there")) {
		t.Errorf("sendMessage went out chunked=%v length=%d with %d bytes; want its length and the text",
			msg.chunked, msg.length, len(msg.body))
	}
	if !strings.HasSuffix(doc.path, "/sendDocument") || !doc.chunked || doc.bodyRead != nil ||
		!bytes.Contains(doc.body, upload) {
		t.Errorf("sendDocument went out chunked=%v (read error %v) with %d bytes; want the whole %d-byte upload, chunked",
			doc.chunked, doc.bodyRead, len(doc.body), len(upload))
	}
}

// A body that fails while it is read ahead fails the request; nothing is
// sent.
func TestRequestBodyErrorFailsTheRequest(t *testing.T) {
	broken := errors.New("form broke")
	pr, pw := io.Pipe()
	go func() {
		_, _ = pw.Write([]byte("--boundary\r\n"))
		pw.CloseWithError(broken)
	}()
	req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1:1/bot123:abc/sendMessage", pr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := withLength(req, sendAheadLimit); !errors.Is(err, broken) {
		t.Fatalf("withLength = %v, want the body's error", err)
	}
}
