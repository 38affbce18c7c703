package slack_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
	"github.com/switchboard-chat/switchboard/channels/slack/slacktest"
)

// shareFiles sends a direct message from Ann carrying files and returns
// what reached the handler.
func (h *harness) shareFiles(eventID, text string, files ...map[string]any) channels.Inbound {
	h.t.Helper()
	ev := slacktest.Msg{Channel: "D0ANN", User: "U0ANN", Text: text, SubType: "file_share", Files: files}.Event()
	if _, err := h.fake.SendEvent(eventID, ev); err != nil {
		h.t.Fatal(err)
	}
	return h.Next()
}

// wantOpenFails opens a, wants an error that does not show the token, and
// returns it.
func wantOpenFails(ctx context.Context, t *testing.T, a channels.Attachment) error {
	t.Helper()
	rc, err := a.Open(ctx)
	if err == nil {
		rc.Close()
		t.Fatalf("Open %s succeeded", a.Name)
	}
	if strings.Contains(err.Error(), botToken) {
		t.Errorf("error shows the bot token: %v", err)
	}
	return err
}

func TestFileOnMessageReachesTheHandler(t *testing.T) {
	h := newHarness(t, nil)
	h.startSocket()
	body := []byte("ERROR one\nok\nERROR two\n")
	file := h.fake.AddFile(slacktest.SharedFile{Name: "build 42.log", Mimetype: "text/plain", Filetype: "text", Body: body})

	in := h.shareFiles("EvF1", "count the errors", file)
	if in.Text != "count the errors" {
		t.Errorf("text = %q, want the message's own words only", in.Text)
	}
	if len(in.Attachments) != 1 {
		t.Fatalf("attachments = %+v, want one", in.Attachments)
	}
	a := in.Attachments[0]
	if a.Kind != channels.KindDocument || a.Name != "build 42.log" || a.DeclaredType != "text/plain" || a.Size != int64(len(body)) {
		t.Errorf("attachment = %+v", a)
	}
	if n := h.fake.Requests(slacktest.Download); n != 0 {
		t.Errorf("%d downloads before Open, want none", n)
	}
	channeltest.WantBody(h.Ctx(), t, a, body)
	if n := h.fake.Requests(slacktest.Download); n != 1 {
		t.Errorf("%d downloads, want 1", n)
	}
}

func TestFilesWithoutTextReachTheHandler(t *testing.T) {
	h := newHarness(t, nil)
	h.startSocket()
	cases := []struct {
		file slacktest.SharedFile
		kind string
	}{
		{slacktest.SharedFile{Name: "screenshot.png", Mimetype: "image/png", Filetype: "png", Body: []byte("\x89PNG pixels")}, channels.KindPhoto},
		{slacktest.SharedFile{Name: "audio_message.webm", Mimetype: "audio/webm", Filetype: "webm", Subtype: "slack_audio", Body: []byte("a clip")}, channels.KindVoice},
		{slacktest.SharedFile{Name: "standup.mp3", Mimetype: "audio/mpeg", Filetype: "mp3", Body: []byte("ID3 tune")}, channels.KindAudio},
		{slacktest.SharedFile{Name: "demo.mov", Mimetype: "video/quicktime", Filetype: "mov", Body: []byte("moov")}, channels.KindVideo},
		{slacktest.SharedFile{Name: "spec.pdf", Mimetype: "application/pdf", Filetype: "pdf", Body: []byte("%PDF-1.7")}, channels.KindDocument},
		{slacktest.SharedFile{Name: "odd", Filetype: "jpg", Body: []byte("\xff\xd8\xff")}, channels.KindPhoto},
	}
	var files []map[string]any
	for _, c := range cases {
		files = append(files, h.fake.AddFile(c.file))
	}
	in := h.shareFiles("EvF2", "", files...)
	if in.Text != "" || in.UserID != "U0ANN" || !in.Direct {
		t.Errorf("inbound = %+v, want Ann's direct message with no text", in)
	}
	if len(in.Attachments) != len(cases) {
		t.Fatalf("%d attachments, want %d", len(in.Attachments), len(cases))
	}
	for i, c := range cases {
		a := in.Attachments[i]
		if a.Kind != c.kind || a.Name != c.file.Name || a.DeclaredType != c.file.Mimetype || a.Size != int64(len(c.file.Body)) {
			t.Errorf("file %s: attachment = %+v, want kind %s", c.file.Name, a, c.kind)
		}
		channeltest.WantBody(h.Ctx(), t, a, c.file.Body)
	}
}

func TestFileOnMentionInChannel(t *testing.T) {
	h := newHarness(t, nil)
	h.startSocket()
	body := []byte("col\n1\n")
	file := h.fake.AddFile(slacktest.SharedFile{Name: "data.csv", Mimetype: "text/csv", Filetype: "csv", Body: body})
	msg := slacktest.Msg{Channel: "C0GEN", User: "U0ANN", Text: "<@" + slacktest.BotUserID + ">", Files: []map[string]any{file}}
	if _, err := h.fake.SendEvent("EvF3", msg.Mention()); err != nil {
		t.Fatal(err)
	}
	in := h.Next()
	if in.ChatID != "C0GEN" || in.Text != "" || len(in.Attachments) != 1 {
		t.Fatalf("inbound = %+v, want the mention with its file and no text", in)
	}
	channeltest.WantBody(h.Ctx(), t, in.Attachments[0], body)
}

func TestMessageWithoutTextOrFilesIsIgnored(t *testing.T) {
	h := newHarness(t, nil)
	h.startSocket()
	if _, err := h.fake.SendEvent("EvF4", slacktest.Msg{Channel: "D0ANN", User: "U0ANN", Text: "  "}.Event()); err != nil {
		t.Fatal(err)
	}
	h.none(h.Ctx())
}

func TestForeignDownloadHostIsNeverFetched(t *testing.T) {
	h := newHarness(t, nil)
	h.startSocket()
	other, hits := channeltest.Elsewhere(t)
	for i, link := range []string{
		other.URL + "/files-pri/T1-F1/download/x.log",
		"https://files.slack.com.evil.example/files-pri/T1-F1/download/x.log",
		"http://files.slack.com/files-pri/T1-F1/download/x.log",
	} {
		file := map[string]any{"id": "FX", "name": "x.log", "mimetype": "text/plain", "size": 9,
			"url_private": link, "url_private_download": link}
		in := h.shareFiles("EvX"+string(rune('a'+i)), "see", file)
		if len(in.Attachments) != 1 {
			t.Fatalf("%s: attachments = %+v", link, in.Attachments)
		}
		wantOpenFails(h.Ctx(), t, in.Attachments[0])
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the foreign host got %d requests, want none", n)
	}
}

func TestDownloadRedirectElsewhereIsNotFollowed(t *testing.T) {
	h := newHarness(t, nil)
	h.startSocket()
	other, hits := channeltest.Elsewhere(t)
	file := h.fake.AddFile(slacktest.SharedFile{Name: "a.txt", Mimetype: "text/plain", Body: []byte("x"), RedirectTo: other.URL + "/steal"})
	in := h.shareFiles("EvF5", "see", file)
	wantOpenFails(h.Ctx(), t, in.Attachments[0])
	if h.fake.Requests(slacktest.Download) != 1 || hits.Load() != 0 {
		t.Errorf("downloads %d, requests elsewhere %d; want 1 and 0", h.fake.Requests(slacktest.Download), hits.Load())
	}
}

func TestDownloadWaitsOutRateLimit(t *testing.T) {
	h := newHarness(t, nil)
	h.startSocket()
	body := []byte("after the wait")
	file := h.fake.AddFile(slacktest.SharedFile{Name: "a.txt", Mimetype: "text/plain", Body: body})
	in := h.shareFiles("EvF6", "see", file)
	h.fake.RateLimit(slacktest.Download, 1, 1)
	channeltest.WantBody(h.Ctx(), t, in.Attachments[0], body)
	if n := h.fake.Requests(slacktest.Download); n != 2 {
		t.Errorf("%d downloads, want 2 (one 429, one answer)", n)
	}
}

func TestDownloadRefusedIsAClearError(t *testing.T) {
	h := newHarness(t, nil)
	h.startSocket()
	file := h.fake.AddFile(slacktest.SharedFile{Name: "a.txt", Mimetype: "text/plain", Body: []byte("x")})
	in := h.shareFiles("EvF7", "see", file)
	h.fake.FailHTTP(slacktest.Download, http.StatusForbidden, 1)
	if err := wantOpenFails(h.Ctx(), t, in.Attachments[0]); !strings.Contains(err.Error(), "files:read") {
		t.Errorf("error = %v, want it to name the files:read scope", err)
	}
}

// Slack answers a download it does not authorize with its sign-in page
// and 200; that page must not pass for the file.
func TestDownloadOfASignInPageFails(t *testing.T) {
	h := newHarness(t, nil)
	h.startSocket()
	file := h.fake.AddFile(slacktest.SharedFile{Name: "a.png", Mimetype: "image/png", ContentType: "text/html; charset=utf-8",
		Body: []byte("<!DOCTYPE html><title>Sign in</title>")})
	in := h.shareFiles("EvF8", "see", file)
	if err := wantOpenFails(h.Ctx(), t, in.Attachments[0]); !strings.Contains(err.Error(), "files:read") {
		t.Errorf("error = %v, want it to name the files:read scope", err)
	}
}
