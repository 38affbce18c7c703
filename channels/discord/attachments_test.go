package discord_test

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
	"github.com/switchboard-chat/switchboard/channels/discord"
	"github.com/switchboard-chat/switchboard/channels/discord/discordtest"
)

func TestAttachmentsReachTheHandlerWithTheirBytes(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.startReady()
	logBytes := []byte("ERROR one\nERROR two\n")
	png := []byte("\x89PNG\r\n\x1a\n a screenshot")
	id := h.fake.PushMessage(discordtest.Incoming{ChannelID: dmID, UserID: userID, Text: "count the errors", Files: []discordtest.File{
		{Name: "build 42.log", ContentType: "text/plain; charset=utf-8", Data: logBytes},
		{Name: "../../etc/screen.png", ContentType: "image/png", Data: png},
	}})
	in := h.Next()
	if in.Text != "count the errors" || in.MessageID != id || !in.Direct {
		t.Errorf("inbound = %+v", in)
	}
	if len(in.Attachments) != 2 {
		t.Fatalf("attachments = %+v, want two", in.Attachments)
	}
	doc, img := in.Attachments[0], in.Attachments[1]
	if doc.Kind != channels.KindDocument || doc.Name != "build 42.log" || doc.DeclaredType != "text/plain; charset=utf-8" || doc.Size != int64(len(logBytes)) {
		t.Errorf("log attachment = %+v", doc)
	}
	// The name is passed on as sent; making it safe is the bot's job.
	if img.Kind != channels.KindPhoto || img.Name != "../../etc/screen.png" || img.DeclaredType != "image/png" || img.Size != int64(len(png)) {
		t.Errorf("image attachment = %+v", img)
	}
	if got := channeltest.ReadAttachment(h.Ctx(), t, doc); !bytes.Equal(got, logBytes) {
		t.Errorf("log bytes = %q, want %q", got, logBytes)
	}
	if got := channeltest.ReadAttachment(h.Ctx(), t, img); !bytes.Equal(got, png) {
		t.Errorf("image bytes = %q, want %q", got, png)
	}
	reqs := h.fake.CDNRequests()
	if len(reqs) != 2 {
		t.Fatalf("CDN requests = %+v, want two", reqs)
	}
	for _, r := range reqs {
		if r.Authorization != "" {
			t.Errorf("the download of %s sent Authorization %q; CDN links need no token", r.Path, r.Authorization)
		}
	}
}

// Files without text reach the handler with Text "": in a DM, and in a
// server after a bare mention of the bot. No "text only" answer is sent.
func TestAttachmentWithoutTextReachesTheHandler(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *discord.Options) { o.AllGuildMessages = false })
	h.startReady()
	file := []discordtest.File{{Name: "notes.pdf", ContentType: "application/pdf", Data: []byte("%PDF-1.7")}}
	h.fake.PushMessage(discordtest.Incoming{ChannelID: dmID, UserID: userID, Files: file})
	in := h.Next()
	if in.Text != "" || !in.Direct || len(in.Attachments) != 1 || in.Attachments[0].Name != "notes.pdf" {
		t.Errorf("DM with a file alone = %+v", in)
	}
	h.fake.PushMessage(discordtest.Incoming{ChannelID: channelID, GuildID: guildID, UserID: userID,
		Text: "<@" + discordtest.BotID + ">  ", Files: file})
	in = h.Next()
	if in.Text != "" || in.Direct || len(in.Attachments) != 1 {
		t.Errorf("server message with a mention and a file = %+v", in)
	}
	if got := h.fake.Messages(dmID); len(got) != 0 {
		t.Errorf("the bot answered a file by itself: %+v", got)
	}
}

func TestAttachmentKinds(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.startReady()
	const voiceFlag = 1 << 13
	cases := []struct {
		file  discordtest.File
		flags int
		kind  string
	}{
		{discordtest.File{Name: "a.jpg", ContentType: "image/jpeg"}, 0, channels.KindPhoto},
		{discordtest.File{Name: "song.mp3", ContentType: "audio/mpeg"}, 0, channels.KindAudio},
		{discordtest.File{Name: "voice-message.ogg", ContentType: "audio/ogg"}, voiceFlag, channels.KindVoice},
		{discordtest.File{Name: "clip.mp4", ContentType: "video/mp4"}, 0, channels.KindVideo},
		{discordtest.File{Name: "r.pdf", ContentType: "application/pdf"}, 0, channels.KindDocument},
		{discordtest.File{Name: "noext"}, 0, channels.KindDocument},
		{discordtest.File{Name: "x.png", ContentType: "IMAGE/PNG"}, voiceFlag, channels.KindPhoto},
	}
	for _, c := range cases {
		c.file.Data = []byte("bytes of " + c.file.Name)
		h.fake.PushMessage(discordtest.Incoming{ChannelID: dmID, UserID: userID, Flags: c.flags, Files: []discordtest.File{c.file}})
		in := h.Next()
		if len(in.Attachments) != 1 || in.Attachments[0].Kind != c.kind {
			t.Errorf("%s (%q, flags %d): attachments %+v, want kind %s", c.file.Name, c.file.ContentType, c.flags, in.Attachments, c.kind)
		}
	}
}

func TestTextHasNoAttachments(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.startReady()
	h.fake.SendMessage(dmID, "", userID, "Ann", "just words")
	if in := h.Next(); in.Attachments != nil {
		t.Errorf("attachments of a text message = %+v", in.Attachments)
	}
}

func TestAttachmentOnAForeignHostIsNeverFetched(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.startReady()
	other, hits := channeltest.Elsewhere(t)
	for _, link := range []string{
		other.URL + "/attachments/1/2/x.png",
		"https://cdn.discordapp.com.evil.example/attachments/1/2/x.png",
		"http://cdn.discordapp.com/attachments/1/2/x.png", // not https
		strings.Replace(h.fake.URL(), "http://", "http://user@", 1) + "/attachments/1/2/x.png",
		"file:///etc/passwd",
	} {
		h.fake.PushMessage(discordtest.Incoming{ChannelID: dmID, UserID: userID, Text: "look",
			Files: []discordtest.File{{Name: "x.png", ContentType: "image/png", URL: link}}})
		in := h.Next()
		if len(in.Attachments) != 1 {
			t.Fatalf("attachments = %+v", in.Attachments)
		}
		rc, err := in.Attachments[0].Open(h.Ctx())
		if err == nil {
			rc.Close()
			t.Errorf("Open of %s succeeded", link)
			continue
		}
		if !strings.Contains(err.Error(), "not on Discord's CDN") {
			t.Errorf("Open of %s: %v, want a refusal naming the CDN", link, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the foreign server got %d requests, want none", n)
	}
	if n := len(h.fake.CDNRequests()); n != 0 {
		t.Errorf("the fake's CDN got %d requests, want none", n)
	}
}

func TestAttachmentDownloadWaitsOutRateLimits(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *discord.Options) { o.MaxRetries = 2 })
	h.startReady()
	data := []byte("eventually")
	h.fake.PushMessage(discordtest.Incoming{ChannelID: dmID, UserID: userID, Files: []discordtest.File{{Name: "a.txt", Data: data}}})
	a := h.Next().Attachments[0]

	// Retry-After: 1, then 0.01: the last one counts, so this takes 20ms.
	h.fake.FailWith(discordtest.RouteCDN, discordtest.Failure{Status: http.StatusTooManyRequests,
		RetryAfter: 10 * time.Millisecond, ExtraRetryAfter: []string{"0.01"}, Times: 2})
	start := time.Now()
	if got := channeltest.ReadAttachment(h.Ctx(), t, a); !bytes.Equal(got, data) {
		t.Errorf("bytes after two 429s = %q", got)
	}
	if took := time.Since(start); took >= 2*time.Second {
		t.Errorf("two 429s took %v: the first Retry-After (1s) was heeded, not the last (10ms)", took)
	}
	if n := h.fake.Requests(discordtest.RouteCDN); n != 3 {
		t.Errorf("%d downloads, want 3 (two 429s, then the file)", n)
	}

	h.fake.FailWith(discordtest.RouteCDN, discordtest.Failure{Status: http.StatusTooManyRequests,
		RetryAfter: 10 * time.Millisecond, ExtraRetryAfter: []string{"0.01"}, Times: 3})
	rc, err := a.Open(h.Ctx())
	var ra *channels.RetryAfterError
	if !errors.As(err, &ra) {
		if rc != nil {
			rc.Close()
		}
		t.Fatalf("three 429s with MaxRetries 2: %v, want a RetryAfterError", err)
	}
	if ra.After != 10*time.Millisecond {
		t.Errorf("RetryAfter = %v, want the last header's 10ms", ra.After)
	}
}

func TestAttachmentGoneIsPermanent(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.startReady()
	h.fake.PushMessage(discordtest.Incoming{ChannelID: dmID, UserID: userID,
		Files: []discordtest.File{{Name: "gone.txt", URL: h.fake.URL() + "/attachments/1/2/gone.txt"}}})
	rc, err := h.Next().Attachments[0].Open(h.Ctx())
	if err == nil {
		rc.Close()
		t.Fatal("Open of a missing file succeeded")
	}
	if !errors.Is(err, channels.ErrPermanent) || strings.Contains(err.Error(), token) {
		t.Errorf("error = %v, want ErrPermanent without the token", err)
	}
}
