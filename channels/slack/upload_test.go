package slack_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/slack/slacktest"
)

// fileOf is a channels.File streaming body, counting its opens.
func fileOf(name, typ string, body []byte, opens *atomic.Int32) *channels.File {
	return &channels.File{Kind: channels.KindDocument, Name: name, Type: typ, Size: int64(len(body)),
		Open: func(context.Context) (io.ReadCloser, error) {
			opens.Add(1)
			return io.NopCloser(bytes.NewReader(body)), nil
		}}
}

// onlyUpload returns the one file shared in channel.
func onlyUpload(t *testing.T, fake *slacktest.Server, channel string) slacktest.Uploaded {
	t.Helper()
	ups := fake.Uploads(channel)
	if len(ups) != 1 {
		t.Fatalf("%d files shared in %s, want 1", len(ups), channel)
	}
	return ups[0]
}

func TestSendFileUploadsExactBytesInTheThread(t *testing.T) {
	h := newHarness(t, nil)
	body := make([]byte, 3<<20+17) // several multipart buffers' worth
	for i := range body {
		body[i] = byte(rand.IntN(256))
	}
	var opens atomic.Int32
	to := channels.Address{Platform: "slack", ChatID: "C0GEN", ThreadID: "1700000030.000100"}
	id, err := h.ch.Send(h.Ctx(), channels.Outbound{To: to, Text: "the **report** & <notes>", File: fileOf("report.bin", "application/octet-stream", body, &opens)})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	up := onlyUpload(t, h.fake, "C0GEN")
	if !bytes.Equal(up.Body, body) {
		t.Errorf("Slack received %d bytes, not the file's %d", len(up.Body), len(body))
	}
	if up.Filename != "report.bin" || up.Length != len(body) || up.Title != "report.bin" {
		t.Errorf("upload announced as %q, %d bytes, title %q", up.Filename, up.Length, up.Title)
	}
	if up.ThreadTS != to.ThreadID {
		t.Errorf("shared in thread %q, want %q", up.ThreadTS, to.ThreadID)
	}
	if up.Comment != "the *report* &amp; &lt;notes&gt;" {
		t.Errorf("initial_comment = %q, want the caption as mrkdwn", up.Comment)
	}
	if id != up.TS || id == "" {
		t.Errorf("Send returned %q, the file's message is %q", id, up.TS)
	}
	if n := opens.Load(); n != 1 {
		t.Errorf("file opened %d times, want once", n)
	}
	if n := len(h.fake.Posted("C0GEN", "chat.postMessage")); n != 0 {
		t.Errorf("%d chat messages besides the file, want none", n)
	}
}

func TestSendFileToAUserGoesToTheirDirectMessages(t *testing.T) {
	h := newHarness(t, nil)
	var opens atomic.Int32
	body := []byte("a voice note, as a file")
	f := fileOf("note.ogg", "audio/ogg", body, &opens)
	f.Kind = channels.KindVoice
	if _, err := h.ch.Send(h.Ctx(), channels.Outbound{To: channels.Address{Platform: "slack", ChatID: "U0ANN"}, File: f}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	up := onlyUpload(t, h.fake, slacktest.IM("U0ANN"))
	if !bytes.Equal(up.Body, body) || up.Comment != "" || up.ThreadTS != "" {
		t.Errorf("upload = %+v", up)
	}
}

func TestSendFileLongCaptionContinuesInMessages(t *testing.T) {
	h := newHarness(t, nil)
	var opens atomic.Int32
	caption := strings.Repeat("word ", 1500) // 7500 characters: three messages' worth
	to := channels.Address{Platform: "slack", ChatID: "C0GEN", ThreadID: "1700000031.000100"}
	id, err := h.ch.Send(h.Ctx(), channels.Outbound{To: to, Text: caption, File: fileOf("a.txt", "text/plain", []byte("x"), &opens)})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	up := onlyUpload(t, h.fake, "C0GEN")
	posts := h.fake.Posted("C0GEN", "chat.postMessage")
	if len(posts) == 0 || up.Comment == "" {
		t.Fatalf("comment %d characters, %d follow-up messages", len(up.Comment), len(posts))
	}
	got := up.Comment
	for _, p := range posts {
		if p.ThreadTS != to.ThreadID {
			t.Errorf("follow-up in thread %q, want %q", p.ThreadTS, to.ThreadID)
		}
		got += " " + p.Section
	}
	if strings.Join(strings.Fields(got), " ") != strings.TrimSpace(caption) {
		t.Errorf("the caption arrived altered across the file and %d messages", len(posts))
	}
	if id != posts[len(posts)-1].TS {
		t.Errorf("Send returned %q, last message is %q", id, posts[len(posts)-1].TS)
	}
}

func TestSendFileOverSlacksLimitIsRefusedUnread(t *testing.T) {
	h := newHarness(t, nil)
	var opens atomic.Int32
	f := fileOf("huge.iso", "application/octet-stream", nil, &opens)
	f.Size = 1_000_000_001
	_, err := h.ch.Send(h.Ctx(), channels.Outbound{To: channels.Address{Platform: "slack", ChatID: "C0GEN"}, File: f})
	var tooLarge *channels.FileTooLargeError
	if !errors.As(err, &tooLarge) || !errors.Is(err, channels.ErrPermanent) || tooLarge.Limit != 1_000_000_000 {
		t.Fatalf("Send = %v, want a permanent FileTooLargeError with Slack's 1 GB limit", err)
	}
	if opens.Load() != 0 || h.fake.Requests("files.getUploadURLExternal") != 0 {
		t.Errorf("opens %d, upload URLs asked %d; want none", opens.Load(), h.fake.Requests("files.getUploadURLExternal"))
	}
}

func TestSendFileWaitsOutRateLimitedUpload(t *testing.T) {
	h := newHarness(t, nil)
	h.fake.RateLimit(slacktest.Upload, 1, 1)
	var opens atomic.Int32
	body := []byte("sent again after the wait")
	if _, err := h.ch.Send(h.Ctx(), channels.Outbound{To: channels.Address{Platform: "slack", ChatID: "C0GEN"}, File: fileOf("a.txt", "text/plain", body, &opens)}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if up := onlyUpload(t, h.fake, "C0GEN"); !bytes.Equal(up.Body, body) {
		t.Errorf("Slack received %q", up.Body)
	}
	if opens.Load() != 2 || h.fake.Requests(slacktest.Upload) != 2 {
		t.Errorf("opens %d, upload POSTs %d; want 2 and 2", opens.Load(), h.fake.Requests(slacktest.Upload))
	}
}

// A file that ends before its announced size is not shared truncated.
func TestSendFileShorterThanItsSizeIsNotShared(t *testing.T) {
	h := newHarness(t, nil)
	var opens atomic.Int32
	f := fileOf("cut.log", "text/plain", []byte("only half"), &opens)
	f.Size *= 2
	if _, err := h.ch.Send(h.Ctx(), channels.Outbound{To: channels.Address{Platform: "slack", ChatID: "C0GEN"}, File: f}); err == nil {
		t.Fatal("Send of a truncated file succeeded")
	}
	if n := h.fake.Requests("files.completeUploadExternal"); n != 0 || len(h.fake.Uploads("C0GEN")) != 0 {
		t.Errorf("%d completes, %d files shared; want none", n, len(h.fake.Uploads("C0GEN")))
	}
}

func TestSendFileIntoAMissingChannelIsPermanent(t *testing.T) {
	h := newHarness(t, nil)
	h.fake.Fail("files.completeUploadExternal", "not_in_channel", 1)
	var opens atomic.Int32
	_, err := h.ch.Send(h.Ctx(), channels.Outbound{To: channels.Address{Platform: "slack", ChatID: "C0GEN"}, File: fileOf("a.txt", "text/plain", []byte("x"), &opens)})
	if !errors.Is(err, channels.ErrPermanent) || !strings.Contains(err.Error(), "/invite") || strings.Contains(err.Error(), botToken) {
		t.Errorf("Send = %v, want a permanent error saying to invite the bot", err)
	}
}
