package discord_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/discord"
	"github.com/switchboard-chat/switchboard/channels/discord/discordtest"
)

// fileOf is an outgoing file with data, counting how often it is opened.
func fileOf(kind, name, typ string, data []byte) (*channels.File, *atomic.Int32) {
	var opens atomic.Int32
	return &channels.File{
		Kind: kind, Name: name, Type: typ, Size: int64(len(data)),
		Open: func(context.Context) (io.ReadCloser, error) {
			opens.Add(1)
			return io.NopCloser(bytes.NewReader(data)), nil
		},
	}, &opens
}

// onlyFile returns the one file m carries.
func onlyFile(t *testing.T, m discordtest.Message) discordtest.File {
	t.Helper()
	if len(m.Files) != 1 {
		t.Fatalf("message %s carries files %+v, want one", m.ID, m.Files)
	}
	return m.Files[0]
}

func TestSendFileWithCaptionAsAReply(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	asked := h.fake.SendMessage(channelID, guildID, userID, "Ann", "draw a chart")
	data := []byte("\x89PNG\r\n\x1a\n chart bytes \x00\xff")
	f, _ := fileOf(channels.KindPhoto, `chart "q3".png`, "image/png", data)
	id, err := h.ch.Send(h.Ctx(), channels.Outbound{To: to(channelID), Text: "Here is the **chart** @everyone",
		ReplyTo: asked, Key: "sb77", File: f})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	msgs := h.fake.Messages(channelID)
	if len(msgs) != 1 || msgs[0].ID != id {
		t.Fatalf("messages = %+v, want one with id %s", msgs, id)
	}
	m := msgs[0]
	got := onlyFile(t, m)
	if !bytes.Equal(got.Data, data) || got.Name != `chart "q3".png` || got.ContentType != "image/png" {
		t.Errorf("Discord received file %q named %q of type %q; want %q, %q, image/png", got.Data, got.Name, got.ContentType, data, `chart "q3".png`)
	}
	if !strings.HasPrefix(m.Content, "Here is the **chart** @") || strings.Contains(m.Content, "@everyone") {
		t.Errorf("caption = %q, want the text rendered with mentions disarmed", m.Content)
	}
	if m.ReplyTo != asked || !m.AllowedMentions.NoneAllowed() || !m.AllowedMentions.RepliedUser {
		t.Errorf("reply to %q, allowed mentions %+v; want a reply to %s mentioning nobody else", m.ReplyTo, m.AllowedMentions, asked)
	}
	if !m.Multipart || m.ContentLength <= int64(len(data)) {
		t.Errorf("multipart %v, Content-Length %d: want a multipart body with its length declared", m.Multipart, m.ContentLength)
	}
	if m.Nonce != "sb77.0" {
		t.Errorf("nonce = %q, want the key's", m.Nonce)
	}
}

func TestSendFileAloneInAThread(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	const threadID = "300000000000000009"
	h.fake.AddChannel(threadID, guildID)
	data := []byte("OggS voice")
	f, _ := fileOf(channels.KindVoice, "reply.ogg", "audio/ogg", data)
	addr := channels.Address{Platform: "discord", ChatID: channelID, ThreadID: threadID}
	if _, err := h.ch.Send(h.Ctx(), channels.Outbound{To: addr, File: f}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	msgs := h.fake.Messages(threadID)
	if len(msgs) != 1 || msgs[0].Content != "" {
		t.Fatalf("messages in the thread = %+v, want one without text", msgs)
	}
	if got := onlyFile(t, msgs[0]); !bytes.Equal(got.Data, data) || got.Name != "reply.ogg" {
		t.Errorf("file = %+v", got)
	}
	if n := len(h.fake.Messages(channelID)); n != 0 {
		t.Errorf("%d messages in the parent channel, want none", n)
	}
}

func TestSendFileOverTheLimitIsRefusedUnread(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.fake.AddChannel(channelID, guildID)
	f := &channels.File{Kind: channels.KindDocument, Name: "big.bin", Size: discord.DefaultMaxFileBytes + 1,
		Open: func(context.Context) (io.ReadCloser, error) {
			t.Error("a file over the limit was opened")
			return io.NopCloser(strings.NewReader("")), nil
		}}
	_, err := h.ch.Send(h.Ctx(), channels.Outbound{To: to(channelID), Text: "here", File: f})
	var big *channels.FileTooLargeError
	if !errors.As(err, &big) || !errors.Is(err, channels.ErrPermanent) {
		t.Fatalf("Send = %v, want a permanent FileTooLargeError", err)
	}
	if big.Limit != discord.DefaultMaxFileBytes || big.Size != f.Size || big.Name != "big.bin" {
		t.Errorf("error = %+v", big)
	}
	if n := h.fake.Requests(discordtest.RouteSend); n != 0 {
		t.Errorf("%d message creates, want none", n)
	}
}

// A boosted server takes larger files: MaxFileBytes raises the limit, and
// a file Discord itself refuses as too large is a permanent error.
func TestSendFileDiscordRefusesAsTooLarge(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *discord.Options) { o.MaxFileBytes = 2 * discordtest.MaxUpload })
	h.fake.AddChannel(channelID, guildID)
	f, _ := fileOf(channels.KindDocument, "big.bin", "", make([]byte, discordtest.MaxUpload+1))
	_, err := h.ch.Send(h.Ctx(), channels.Outbound{To: to(channelID), File: f})
	if !errors.Is(err, channels.ErrPermanent) || !strings.Contains(err.Error(), "too large") {
		t.Fatalf("Send = %v, want a permanent error saying the file is too large", err)
	}
	if n := len(h.fake.Messages(channelID)); n != 0 {
		t.Errorf("%d messages posted", n)
	}
}

func TestSendFileWithKeyIsPostedOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.fake.AddChannel(channelID, guildID)
	f, opens := fileOf(channels.KindDocument, "report.txt", "text/plain", []byte("all green"))
	msg := channels.Outbound{To: to(channelID), Text: "report", Key: "sb90", File: f}
	first, err := h.ch.Send(h.Ctx(), msg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := h.ch.Send(h.Ctx(), msg)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(h.fake.Messages(channelID)); n != 1 || again != first {
		t.Errorf("a repeated send posted again: %d messages, ids %s and %s", n, first, again)
	}
	if n := opens.Load(); n != 2 {
		t.Errorf("file opened %d times, want once per send", n)
	}
}

func TestSendFileWaitsOutARateLimitAndReopens(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.fake.AddChannel(channelID, guildID)
	data := []byte("second time lucky")
	f, opens := fileOf(channels.KindDocument, "a.txt", "text/plain", data)
	h.fake.Fail(discordtest.RouteSend, http.StatusTooManyRequests, 10*time.Millisecond, 1)
	if _, err := h.ch.Send(h.Ctx(), channels.Outbound{To: to(channelID), File: f}); err != nil {
		t.Fatalf("Send after a 429: %v", err)
	}
	if got := onlyFile(t, h.fake.Messages(channelID)[0]); !bytes.Equal(got.Data, data) {
		t.Errorf("file = %q", got.Data)
	}
	if n := opens.Load(); n != 2 {
		t.Errorf("file opened %d times, want twice (one per attempt)", n)
	}

	h.fake.Fail(discordtest.RouteSend, http.StatusTooManyRequests, 2*time.Minute, 1)
	_, err := h.ch.Send(h.Ctx(), channels.Outbound{To: to(channelID), File: f})
	var ra *channels.RetryAfterError
	if !errors.As(err, &ra) || ra.After != 2*time.Minute {
		t.Errorf("a long rate limit: %v, want a RetryAfterError of 2m", err)
	}
}

func TestSendFileWithALongCaption(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.fake.AddChannel(channelID, guildID)
	f, _ := fileOf(channels.KindDocument, "a.txt", "text/plain", []byte("x"))
	text := strings.Repeat("word ", 500) // two messages' worth
	buttons := [][]channels.Button{{{Label: "OK", Data: "ok"}}}
	if _, err := h.ch.Send(h.Ctx(), channels.Outbound{To: to(channelID), Text: text, File: f, Buttons: buttons}); err != nil {
		t.Fatal(err)
	}
	msgs := h.fake.Messages(channelID)
	if len(msgs) != 2 {
		t.Fatalf("%d messages, want the file with the first part, then the rest", len(msgs))
	}
	if len(msgs[0].Files) != 1 || len(msgs[1].Files) != 0 || len(msgs[1].Buttons) != 1 {
		t.Errorf("files %d and %d, buttons on the last %v", len(msgs[0].Files), len(msgs[1].Files), msgs[1].Buttons)
	}
	for i, m := range msgs {
		if n := utf8.RuneCountInString(m.Content); n == 0 || n > 2000 {
			t.Errorf("part %d is %d characters", i, n)
		}
	}
}

func TestSendFileOfTheWrongSizeFails(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.fake.AddChannel(channelID, guildID)
	for _, size := range []int64{10, 3} {
		f, _ := fileOf(channels.KindDocument, "a.txt", "text/plain", []byte("five!"))
		f.Size = size
		if _, err := h.ch.Send(h.Ctx(), channels.Outbound{To: to(channelID), File: f}); err == nil {
			t.Errorf("a 5-byte file said to be %d bytes was sent", size)
		}
	}
	if msgs := h.fake.Messages(channelID); len(msgs) != 0 {
		t.Errorf("messages posted: %+v", msgs)
	}
}

func TestSendFileToAUserOpensTheirDM(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.fake.AddUser(userID, "Ann")
	data := []byte("for you")
	f, _ := fileOf(channels.KindDocument, "a.txt", "text/plain", data)
	if _, err := h.ch.Send(h.Ctx(), channels.Outbound{To: to(userID), Text: "here", File: f}); err != nil {
		t.Fatalf("Send to a user id: %v", err)
	}
	dm := h.fake.DMChannel(userID)
	msgs := h.fake.Messages(dm)
	if dm == "" || len(msgs) != 1 || !bytes.Equal(onlyFile(t, msgs[0]).Data, data) {
		t.Errorf("DM %q messages %+v", dm, msgs)
	}
}
