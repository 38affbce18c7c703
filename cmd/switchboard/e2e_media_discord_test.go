package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
	"github.com/switchboard-chat/switchboard/channels/discord/discordtest"
)

// Where the Discord scenarios happen: a server channel, and its writer,
// an admin so that they may allow send_file.
const (
	sdGuild   = "900000000000000050"
	sdChannel = "800000000000000050"
	sdWriter  = "700000000000000050"
)

// discordMedia is one daemon serving a fake Discord with media on.
type discordMedia struct{ dc *discordtest.Server }

// send writes text with files in sdChannel, mentioning the bot, and
// returns the message id; voice marks it a recorded voice message.
func (d discordMedia) send(text string, voice bool, files ...discordtest.File) string {
	in := discordtest.Incoming{ChannelID: sdChannel, GuildID: sdGuild, UserID: sdWriter, UserName: "ann",
		Text: "<@" + discordtest.BotID + "> " + text, Files: files}
	if voice {
		in.Flags = 1 << 13 // IS_VOICE_MESSAGE
	}
	return d.dc.PushMessage(in)
}

// waitMessage waits for a bot message in channel that cond accepts and
// returns it.
func (d discordMedia) waitMessage(ctx context.Context, t *testing.T, channel, what string, cond func(discordtest.Message) bool) discordtest.Message {
	t.Helper()
	var found discordtest.Message
	defer func() {
		if t.Failed() {
			for _, m := range d.dc.Messages(channel) {
				t.Logf("in %s: %q (reply to %s, %d files)", channel, m.Content, m.ReplyTo, len(m.Files))
			}
		}
	}()
	eventually(ctx, t, what, func() bool {
		for _, m := range d.dc.Messages(channel) {
			if cond(m) {
				found = m
				return true
			}
		}
		return false
	})
	return found
}

// ask sends text with files and waits for the reply to it holding want.
func (d discordMedia) ask(ctx context.Context, t *testing.T, text, want string, voice bool, files ...discordtest.File) {
	t.Helper()
	id := d.send(text, voice, files...)
	d.waitMessage(ctx, t, sdChannel, fmt.Sprintf("a reply holding %q", want), func(m discordtest.Message) bool {
		return m.ReplyTo == id && strings.Contains(m.Content, want)
	})
}

// withFiles returns the bot's messages in channel that carry files,
// oldest first.
func withFiles(dc *discordtest.Server, channel string) []discordtest.Message {
	var out []discordtest.Message
	for _, m := range dc.Messages(channel) {
		if len(m.Files) > 0 {
			out = append(out, m)
		}
	}
	return out
}

// fileMessages returns the bot's messages in sdChannel that carry files,
// oldest first.
func (d discordMedia) fileMessages() []discordtest.Message { return withFiles(d.dc, sdChannel) }

// wantPostedOnce checks that, after the first before messages with files
// in sdChannel, exactly one more carries a file, c's, with its exact
// bytes, once the outbox has sent all it holds for sdChannel; it returns
// that message.
func (d discordMedia) wantPostedOnce(ctx context.Context, t *testing.T, dbURL string, before int, c sdToolFile) discordtest.Message {
	t.Helper()
	eventually(ctx, t, c.tool+"'s file in the channel", func() bool { return len(d.fileMessages()) > before })
	waitOutboxSent(ctx, t, dbURL, sdChannel)
	sent := d.fileMessages()[before:]
	if len(sent) != 1 || len(sent[0].Files) != 1 {
		t.Fatalf("%s: %d new messages with files, want exactly one with one file: %+v", c.tool, len(sent), sent)
	}
	m, f := sent[0], sent[0].Files[0]
	if f.Name != c.name || !bytes.Equal(f.Data, c.body) || !m.Multipart {
		t.Fatalf("%s: a message with %s (%d bytes, multipart %v), want %s with its %d exact bytes",
			c.tool, f.Name, len(f.Data), m.Multipart, c.name, len(c.body))
	}
	return m
}

// TestE2EDiscordMedia: attachments sent on Discord reach the model
// through the built daemon (a picture as image input, a voice message as
// its transcript, a text file and a PDF as their text), send_file,
// create_image and tts each post their file once, and a link off
// Discord's CDN is never fetched and the person is told.
func TestE2EDiscordMedia(t *testing.T) {
	ctx := testCtx(t, 90*time.Second)
	dc := discordtest.NewServer()
	t.Cleanup(dc.Close)
	llm, dbURL := sdStartMedia(ctx, t, "discord:"+sdWriter, func(env map[string]string) { withDiscord(env, dc) })
	d := discordMedia{dc: dc}

	t.Run("PictureAsImageInput", func(t *testing.T) {
		d.ask(ctx, t, "what is in the chart?", "echo: what is in the chart?", false,
			discordtest.File{Name: "chart.png", ContentType: "image/png", Data: sdPicture})
		sdWantPicture(t, llm, "what is in the chart?")
	})

	t.Run("VoiceMessageAsTranscript", func(t *testing.T) {
		llm.EnqueueTranscription(llmtest.MediaReply{Text: sdTranscript})
		d.ask(ctx, t, "voice here", sdTranscript, true,
			discordtest.File{Name: "voice-message.ogg", ContentType: "audio/ogg", Data: sdClip})
		sdWantVoice(t, llm, "voice here")
	})

	t.Run("TextAndPDFAsText", func(t *testing.T) {
		d.ask(ctx, t, "read these", "echo: read these", false,
			discordtest.File{Name: "plan.md", ContentType: "text/markdown; charset=utf-8", Data: sdNotes},
			discordtest.File{Name: "report.pdf", ContentType: "application/pdf", Data: sdPDF})
		sdWantDocuments(t, llm, "read these")
	})

	t.Run("SendFilePostsOnce", func(t *testing.T) {
		d.send(sdSendBack+"inbox/totals.csv", false, discordtest.File{Name: "totals.csv", ContentType: "text/csv", Data: sdTotals})
		dm := ""
		eventually(ctx, t, "the admin's DM channel", func() bool { dm = dc.DMChannel(sdWriter); return dm != "" })
		ask := d.waitMessage(ctx, t, dm, "the send_file approval request", func(m discordtest.Message) bool {
			return strings.Contains(m.Content, "send_file")
		})
		dc.PressButton(dm, ask.ID, sdWriter, discordButton(t, ask, "Allow once"))
		// The run resumed by the approval answers without a reply reference.
		d.waitMessage(ctx, t, sdChannel, "send_file's result", func(m discordtest.Message) bool {
			return strings.Contains(m.Content, "said: sent totals.csv")
		})
		m := d.wantPostedOnce(ctx, t, dbURL, 0, sdToolFile{tool: "send_file", name: "totals.csv", body: sdTotals})
		if m.Content != "here it is" {
			t.Fatalf("totals.csv came with %q, want its caption", m.Content)
		}
	})

	t.Run("CreateImageAndTTSPostOnce", func(t *testing.T) {
		for _, c := range sdToolFiles(t, llm) {
			before := len(d.fileMessages())
			// Discord shows the tool name escaped (create\_image).
			d.ask(ctx, t, c.call, " said: sent "+c.name, false)
			d.wantPostedOnce(ctx, t, dbURL, before, c)
		}
		sdWantMadeOnce(t, llm)
	})

	t.Run("ForeignLinkNeverFetched", func(t *testing.T) {
		elsewhere, hits := channeltest.Elsewhere(t)
		d.ask(ctx, t, "look at this", "I could not download evil.png", false,
			discordtest.File{Name: "evil.png", ContentType: "image/png", Size: 9, URL: elsewhere.URL + "/attachments/1/2/evil.png"})
		sdWantNotFetched(t, llm, "look at this", hits)
	})
}
