package telegram_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

// pollingHarness is a harness whose channel is started and polling.
func pollingHarness(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t, nil)
	h.Start(nil)
	h.waitPolling()
	return h
}

// onlyAttachment returns the one attachment of in.
func onlyAttachment(t *testing.T, in channels.Inbound) channels.Attachment {
	t.Helper()
	if len(in.Attachments) != 1 {
		t.Fatalf("attachments = %+v, want one", in.Attachments)
	}
	return in.Attachments[0]
}

func TestPhotoAttachmentIsTheLargestSize(t *testing.T) {
	h := pollingHarness(t)
	big := []byte("\xff\xd8\xff\xe0 the full-size photo")
	h.fake.AddFile("ph1", "photo.jpg", big)
	h.fake.AddFile("ph1-small", "small.jpg", []byte("the preview"))
	h.fake.SendMedia(21, 21, "why is this red?", telegramtest.Media{Kind: "photo", FileID: "ph1", Size: int64(len(big))})

	in := h.Next()
	if !strings.HasPrefix(in.Text, "why is this red?") {
		t.Errorf("text = %q, want the caption first", in.Text)
	}
	a := onlyAttachment(t, in)
	if a.Kind != channels.KindPhoto || a.Name != "photo.jpg" || a.Size != int64(len(big)) || a.DeclaredType != "" {
		t.Errorf("attachment = %+v", a)
	}
	channeltest.WantBody(h.Ctx(), t, a, big) // the largest size's bytes
}

func TestDocumentKeepsNameAndType(t *testing.T) {
	h := pollingHarness(t)
	body := []byte("ERROR one\nERROR two\n")
	h.fake.AddFile("doc1", "build.log", body)
	h.fake.SendMedia(22, 22, "count the errors", telegramtest.Media{Kind: "document", FileID: "doc1",
		FileName: "build 42.log", MimeType: "text/plain", Size: int64(len(body))})

	in := h.Next()
	a := onlyAttachment(t, in)
	if a.Kind != channels.KindDocument || a.Name != "build 42.log" || a.DeclaredType != "text/plain" || a.Size != int64(len(body)) {
		t.Errorf("attachment = %+v", a)
	}
	channeltest.WantBody(h.Ctx(), t, a, body)
}

func TestAttachmentKinds(t *testing.T) {
	h := pollingHarness(t)
	cases := []struct {
		media    telegramtest.Media
		kind     string
		name     string
		declared string
	}{
		{telegramtest.Media{Kind: "voice", FileID: "v1", MimeType: "audio/ogg", Size: 5}, channels.KindVoice, "voice.ogg", "audio/ogg"},
		{telegramtest.Media{Kind: "audio", FileID: "a1", MimeType: "audio/mpeg", Size: 5}, channels.KindAudio, "audio.mp3", "audio/mpeg"},
		{telegramtest.Media{Kind: "audio", FileID: "a2", FileName: "standup.m4a", MimeType: "audio/mp4", Size: 5}, channels.KindAudio, "standup.m4a", "audio/mp4"},
		{telegramtest.Media{Kind: "video", FileID: "vi1", MimeType: "video/mp4", Size: 5}, channels.KindVideo, "video.mp4", "video/mp4"},
		{telegramtest.Media{Kind: "video_note", FileID: "vn1", Size: 5}, channels.KindVideoNote, "video_note.mp4", ""},
	}
	for i, c := range cases {
		body := []byte("bytes of " + c.media.FileID)
		h.fake.AddFile(c.media.FileID, "f", body)
		chat := int64(30 + i)
		h.fake.SendMedia(chat, chat, "listen", c.media)
		a := onlyAttachment(t, h.Next())
		if a.Kind != c.kind || a.Name != c.name || a.DeclaredType != c.declared || a.Size != 5 {
			t.Errorf("%s: attachment = %+v, want kind %s, name %s, type %q", c.media.FileID, a, c.kind, c.name, c.declared)
		}
		channeltest.WantBody(h.Ctx(), t, a, body)
	}
}

func TestTextHasNoAttachments(t *testing.T) {
	h := pollingHarness(t)
	h.fake.SendText(23, 23, "Ann", "just words")
	if in := h.Next(); in.Attachments != nil {
		t.Errorf("attachments of a text message = %+v", in.Attachments)
	}
}

func TestUnknownFileOpenFails(t *testing.T) {
	h := pollingHarness(t)
	h.fake.SendMedia(24, 24, "see", telegramtest.Media{Kind: "document", FileID: "gone", FileName: "x.pdf"})
	rc, err := onlyAttachment(t, h.Next()).Open(h.Ctx())
	if err == nil {
		rc.Close()
		t.Fatal("Open of a file the API does not know succeeded")
	}
	if strings.Contains(err.Error(), token) {
		t.Errorf("error shows the bot token: %v", err)
	}
	if n := h.fake.Requests("file"); n != 0 {
		t.Errorf("%d downloads after a failed getFile, want none", n)
	}
	if !errors.Is(err, channels.ErrPermanent) {
		t.Errorf("error = %v, want ErrPermanent: an unknown file id stays unknown", err)
	}
}

// A file over the Bot API's download limit (getFile: "file is too big") is
// FileTooLargeError naming Telegram's 20 MB, not an error to retry.
func TestFileTooBigForTheBotAPI(t *testing.T) {
	h := pollingHarness(t)
	h.fake.AddFile("big", "big.mp4", []byte("never served"))
	h.fake.SendMedia(26, 26, "", telegramtest.Media{Kind: "video", FileID: "big", FileName: "big.mp4"})
	a := onlyAttachment(t, h.Next())
	h.fake.FailWith("getFile", telegramtest.Failure{Status: 400, Description: "Bad Request: file is too big"})
	_, err := a.Open(h.Ctx())
	var big *channels.FileTooLargeError
	if !errors.As(err, &big) || big.Platform != "Telegram" || big.Limit != 20_000_000 || !errors.Is(err, channels.ErrPermanent) {
		t.Fatalf("Open = %v, want a permanent FileTooLargeError of Telegram's 20 MB", err)
	}
	if n := h.fake.Requests("file"); n != 0 {
		t.Errorf("%d downloads of a file too big, want none", n)
	}
}

// getFile and the download answering 429 are waited out and retried.
func TestFileRateLimitWaitedOut(t *testing.T) {
	h := pollingHarness(t)
	body := []byte("rate limited bytes")
	h.fake.AddFile("rl", "rl.bin", body)
	h.fake.SendMedia(25, 25, "", telegramtest.Media{Kind: "document", FileID: "rl", FileName: "rl.bin"})
	a := onlyAttachment(t, h.Next())
	h.fake.Fail("getFile", 429, 1, 1)
	h.fake.Fail("file", 429, 1, 1)
	start := time.Now()
	channeltest.WantBody(h.Ctx(), t, a, body)
	if took := time.Since(start); took < 2*time.Second {
		t.Errorf("took %v, want both retry_after (1s each) waited out", took)
	}
	if g, f := h.fake.Requests("getFile"), h.fake.Requests("file"); g != 2 || f != 2 {
		t.Errorf("getFile %d times, download %d times; want 2 each", g, f)
	}
}
