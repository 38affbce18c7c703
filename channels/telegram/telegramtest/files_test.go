package telegramtest_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/go-telegram/bot"

	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

func TestGetFileAndDownload(t *testing.T) {
	s := telegramtest.NewServer(token)
	defer s.Close()
	b := newBot(t, s, bot.WithSkipGetMe())
	ctx := testContext(t)
	s.AddFile("f1", "notes.txt", []byte("hello file"))

	f, err := b.GetFile(ctx, &bot.GetFileParams{FileID: "f1"})
	if err != nil {
		t.Fatalf("GetFile: %v", err)
	}
	if f.FileID != "f1" || f.FileSize != 10 || f.FilePath == "" {
		t.Errorf("file = %+v", f)
	}
	get := func(link string) (int, string) {
		t.Helper()
		r, err := http.Get(link)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		body, _ := io.ReadAll(r.Body)
		return r.StatusCode, string(body)
	}
	if status, body := get(b.FileDownloadLink(f)); status != http.StatusOK || body != "hello file" {
		t.Errorf("download = %d %q", status, body)
	}
	if status, _ := get(s.URL() + "/file/bot1:wrong/" + f.FilePath); status != http.StatusNotFound {
		t.Errorf("download with a wrong token = %d, want 404", status)
	}
	if n := s.Requests("file"); n != 2 {
		t.Errorf("Requests(file) = %d, want 2", n)
	}
	if _, err := b.GetFile(ctx, &bot.GetFileParams{FileID: "nope"}); err == nil {
		t.Error("GetFile of an unknown id succeeded")
	}
}
