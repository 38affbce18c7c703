package telegramtest_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"testing"

	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

// postDocument uploads body to chat 5 with sendDocument and returns the
// HTTP status (0 when the call failed). The request streams: with cut
// set it sends the first cut bytes of the file, then waits for give
// (true: send the rest; false: the client dies).
func postDocument(ctx context.Context, s *telegramtest.Server, body []byte, cut int, give <-chan bool) int {
	pr, pw := io.Pipe()
	w := multipart.NewWriter(pw)
	go func() {
		_ = w.WriteField("chat_id", "5")
		fw, _ := w.CreateFormFile("document", "big.bin")
		if cut > 0 {
			_, _ = fw.Write(body[:cut])
			if !<-give {
				pw.CloseWithError(errors.New("the client died"))
				return
			}
			body = body[cut:]
		}
		_, _ = fw.Write(body)
		pw.CloseWithError(w.Close())
	}()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/bot"+token+"/sendDocument", pr)
	req.Header.Set("Content-Type", w.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// An upload stalled mid-body and abandoned by its client is no message;
// once released, the next upload goes through whole.
func TestStallUploadStopsMidBody(t *testing.T) {
	s := telegramtest.NewServer(token)
	defer s.Close()
	body := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KiB
	reached, release := s.StallUpload("sendDocument", 1000)
	defer release()

	give := make(chan bool, 1)
	status := make(chan int, 1)
	go func() { status <- postDocument(testContext(t), s, body, 2000, give) }()
	select {
	case <-reached:
	case <-testContext(t).Done():
		t.Fatal("the upload never stalled")
	}
	if got := s.Uploads(5); len(got) != 0 || len(s.Messages(5)) != 0 {
		t.Fatalf("a stalled upload is recorded: %+v", got)
	}
	give <- false // the client dies mid-body, as a killed bot does
	release()
	if code := <-status; code == http.StatusOK {
		t.Fatal("an upload cut short was answered 200")
	}
	if code := postDocument(testContext(t), s, body, 0, nil); code != http.StatusOK {
		t.Fatalf("the upload after the stall answered %d", code)
	}
	got := s.Uploads(5)
	if len(got) != 1 || !bytes.Equal(got[0].Body, body) || len(s.Messages(5)) != 1 {
		t.Fatalf("uploads after the abandoned one: %d (want 1 with the whole body), messages %d", len(got), len(s.Messages(5)))
	}
}

// A released stall lets the upload it stopped finish with every byte.
func TestStallUploadReleased(t *testing.T) {
	s := telegramtest.NewServer(token)
	defer s.Close()
	body := bytes.Repeat([]byte("x"), 50_000)
	reached, release := s.StallUpload("senddocument", 10)
	status := make(chan int, 1)
	give := make(chan bool, 1)
	go func() { status <- postDocument(testContext(t), s, body, 100, give) }()
	<-reached
	release()
	give <- true
	if code := <-status; code != http.StatusOK {
		t.Fatalf("the released upload answered %d", code)
	}
	if got := s.Uploads(5); len(got) != 1 || got[0].Size != int64(len(body)) {
		t.Fatalf("released upload recorded as %+v", got)
	}
}
