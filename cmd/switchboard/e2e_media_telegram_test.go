package main

import (
	"bytes"
	"context"
	"fmt"
	"image/color"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/bot/media/mediatest"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

// startMediaTelegram starts a daemon on a fake Telegram and the fake LLM
// with every media model on and the media tools allowed (mediaConfig).
func startMediaTelegram(ctx context.Context, t *testing.T) *telegramE2E {
	t.Helper()
	e := &telegramE2E{tg: telegramtest.NewServer(testToken), llm: llmtest.NewServer(), dir: t.TempDir(), addr: freeAddr(t)}
	t.Cleanup(e.tg.Close)
	t.Cleanup(e.llm.Close)
	e.env = externalEnv(t, e.tg, e.llm, e.addr)
	withMediaModels(e.env)
	writeConfig(t, e.dir, mediaConfig)
	e.restart(ctx, t)
	return e
}

// oggVoice stands for a voice note's Opus audio: what matters is that the
// same bytes arrive where they are sent.
var oggVoice = append([]byte("OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00OpusHead\x01\x01"), bytes.Repeat([]byte{0x5a, 0xa5}, 300)...)

// TestE2ETelegramMedia: through the built daemon, what a person sends on
// Telegram reaches the model as what it is (image input, transcript,
// document text; an album as one message), and what the media tools make
// reaches the chat once as a photo, a voice message or a file, with the
// exact bytes.
func TestE2ETelegramMedia(t *testing.T) {
	ctx := testCtx(t, 3*time.Minute)
	e := startMediaTelegram(ctx, t)
	defer e.d.stop()
	t.Run("PhotoIsImageInput", func(t *testing.T) { testPhotoIsImageInput(ctx, t, e) })
	t.Run("VoiceIsTranscript", func(t *testing.T) { testVoiceIsTranscript(ctx, t, e) })
	t.Run("DocumentsAreText", func(t *testing.T) { testDocumentsAreText(ctx, t, e) })
	t.Run("AlbumIsOneRun", func(t *testing.T) { testAlbumIsOneRun(ctx, t, e) })
	t.Run("ToolFilesReachTheChatOnce", func(t *testing.T) { testToolFilesReachTheChatOnce(ctx, t, e) })
}

// A photo reaches the model as image input with the bytes the person sent.
func testPhotoIsImageInput(ctx context.Context, t *testing.T, e *telegramE2E) {
	const chat = 7101
	pic := pngOf(t, 3, 2, color.RGBA{R: 200, G: 30, B: 30, A: 255})
	e.tg.AddFile("tg-photo", "red.png", pic)
	after := lastID(e.tg, chat)
	e.tg.SendMedia(chat, chat, "what colour is this?", telegramtest.Media{Kind: "photo", FileID: "tg-photo", Size: int64(len(pic))})
	newReplyContaining(ctx, t, e.tg, chat, after, "echo: what colour is this?")

	m, ok := userMessageWith(e.llm, "what colour is this?")
	if !ok {
		t.Fatal("the model never read the photo's caption")
	}
	if len(m.Images) != 1 || m.Images[0].Type != "image/png" || !bytes.Equal(m.Images[0].Data, pic) {
		t.Fatalf("the model was shown %d images (%+v); want the photo's %d PNG bytes", len(m.Images), m.Images, len(pic))
	}
	// Telegram serves every photo as photo.jpg; the type comes from the bytes.
	if line := fmt.Sprintf("[attachment: inbox/photo.jpg, image/png, %d bytes]", len(pic)); !strings.Contains(m.Content, line) {
		t.Fatalf("the model read %q, want %s", m.Content, line)
	}
}

// A voice note reaches the model as its transcript, and the transcription
// service got the note's exact bytes.
func testVoiceIsTranscript(ctx context.Context, t *testing.T, e *telegramE2E) {
	const chat = 7102
	e.llm.EnqueueTranscription(llmtest.MediaReply{Text: "please water the plants"})
	e.tg.AddFile("tg-voice", "voice.oga", oggVoice)
	after := lastID(e.tg, chat)
	e.tg.SendMedia(chat, chat, "", telegramtest.Media{Kind: "voice", FileID: "tg-voice", MimeType: "audio/ogg", Size: int64(len(oggVoice))})
	newReplyContaining(ctx, t, e.tg, chat, after, "please water the plants")

	m, ok := userMessageWith(e.llm, "please water the plants")
	if !ok || !strings.Contains(m.Content, "[voice 0:03] please water the plants") {
		t.Fatalf("the model read %q, want the transcript as [voice 0:03] please water the plants", m.Content)
	}
	var sent [][]byte
	for _, r := range e.llm.Transcriptions() {
		sent = append(sent, r.File)
	}
	if len(sent) != 1 || !bytes.Equal(sent[0], oggVoice) {
		t.Fatalf("the transcription service got %d files; want one, the voice note's %d bytes", len(sent), len(oggVoice))
	}
}

// reportPDF is the PDF DocumentsAreText sends and ToolFilesReachTheChatOnce
// sends back with send_file.
var reportPDF = mediatest.MinimalPDF("Quarterly figures are up nine percent")

// docChat is the chat whose workspace holds inbox/report.pdf.
const docChat = 7103

// A PDF and a text file reach the model as their text.
func testDocumentsAreText(ctx context.Context, t *testing.T, e *telegramE2E) {
	notes := []byte("buy oat milk\nfix the bike\n")
	e.tg.AddFile("tg-pdf", "report.pdf", reportPDF)
	e.tg.AddFile("tg-txt", "notes.txt", notes)
	for _, d := range []struct {
		id, name, typ, caption, text string
		size                         int
	}{
		{"tg-pdf", "report.pdf", "application/pdf", "summarise the report", "[page 1]\nQuarterly figures are up nine percent", len(reportPDF)},
		{"tg-txt", "notes.txt", "text/plain", "what is on my list?", "buy oat milk\nfix the bike", len(notes)},
	} {
		after := lastID(e.tg, docChat)
		e.tg.SendMedia(docChat, docChat, d.caption, telegramtest.Media{Kind: "document", FileID: d.id, FileName: d.name, MimeType: d.typ, Size: int64(d.size)})
		newReplyContaining(ctx, t, e.tg, docChat, after, "echo: "+d.caption)
		m, _ := userMessageWith(e.llm, d.caption)
		want := "[text of inbox/" + d.name + "]\n" + d.text
		if !strings.Contains(m.Content, want) {
			t.Errorf("for %s the model read %q, want its text %q", d.name, m.Content, want)
		}
	}
}

// An album (three photos, one media_group_id) is one message: one model
// call answers it, naming all three files and showing all three images.
func testAlbumIsOneRun(ctx context.Context, t *testing.T, e *telegramE2E) {
	wantAlbumIsOneRun(ctx, t, e.tg, e.llm, 7104)
}

// wantAlbumIsOneRun sends an album of three pictures, the first
// captioned, in chat and wants it answered by one model call that shows
// all three, and answered once.
func wantAlbumIsOneRun(ctx context.Context, t *testing.T, tg *telegramtest.Server, llm *llmtest.Server, chat int64) {
	t.Helper()
	pics := [][]byte{
		pngOf(t, 2, 2, color.RGBA{R: 255, A: 255}),
		pngOf(t, 2, 2, color.RGBA{G: 255, A: 255}),
		pngOf(t, 2, 2, color.RGBA{B: 255, A: 255}),
	}
	after := lastID(tg, chat)
	for i, pic := range pics {
		id := fmt.Sprintf("tg-album-%d", i)
		tg.AddFile(id, "photo.jpg", pic)
		extra := telegramtest.Media{Kind: "photo", FileID: id, Size: int64(len(pic))}.Fields()
		extra["media_group_id"] = "13579"
		if i == 0 {
			extra["caption"] = "our holiday in three pictures"
		}
		tg.PushMessage(telegramtest.Incoming{ChatID: chat, UserID: chat, Extra: extra})
	}
	newReplyContaining(ctx, t, tg, chat, after, "echo: our holiday in three pictures")

	calls := modelCallsWith(llm, "our holiday in three pictures")
	if len(calls) != 1 {
		t.Fatalf("%d model calls answered the album, want 1", len(calls))
	}
	last := calls[0].Messages[len(calls[0].Messages)-1]
	if n := strings.Count(last.Content, "[attachment: inbox/photo"); n != 3 || len(last.Images) != 3 {
		t.Fatalf("the album's message names %d files and shows %d images, want 3 and 3: %q", n, len(last.Images), last.Content)
	}
	for i, pic := range pics {
		if !bytes.Equal(last.Images[i].Data, pic) {
			t.Errorf("image %d of the album is not the %d bytes sent", i, len(pic))
		}
	}
	if got := answers(tg, chat); len(got) != 1 {
		t.Fatalf("the album got %d answers, want 1: %+v", len(got), got)
	}
}

// create_image, tts and send_file each reach the chat once, as a photo, a
// voice message and a document, with the bytes the service made or the
// workspace holds.
func testToolFilesReachTheChatOnce(ctx context.Context, t *testing.T, e *telegramE2E) {
	made := pngOf(t, 4, 4, color.RGBA{R: 10, G: 200, B: 90, A: 255})
	speech := append([]byte("OggS\x00\x02spoken:"), bytes.Repeat([]byte{0x11, 0x22, 0x33}, 200)...)
	e.llm.EnqueueImage(llmtest.MediaReply{Data: made})
	e.llm.EnqueueSpeech(llmtest.MediaReply{Data: speech})
	for _, c := range []struct {
		chat         int64
		call, method string
		want         []byte
	}{
		{7105, `CALL_TOOL:create_image {"prompt":"a green square"}`, "sendPhoto", made},
		{7106, `CALL_TOOL:tts {"text":"good morning"}`, "sendVoice", speech},
		{docChat, `CALL_TOOL:send_file {"path":"inbox/report.pdf","caption":"the report"}`, "sendDocument", reportPDF},
	} {
		before := len(e.tg.Uploads(c.chat))
		after := lastID(e.tg, c.chat)
		e.tg.SendText(c.chat, c.chat, "Ann", c.call)
		tool := strings.Fields(strings.TrimPrefix(c.call, "CALL_TOOL:"))[0]
		newReplyContaining(ctx, t, e.tg, c.chat, after, "tool "+tool+" said: sent")
		ups := e.tg.Uploads(c.chat)[before:]
		if len(ups) != 1 || ups[0].Method != c.method || !bytes.Equal(ups[0].Body, c.want) {
			t.Errorf("%s: the chat got %d files (%+v); want one %s with the %d bytes made", tool, len(ups), ups, c.method, len(c.want))
		}
	}
}
