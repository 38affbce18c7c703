package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/bot/media/mediatest"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
	"github.com/switchboard-chat/switchboard/channels/slack/slacktest"
)

// sdSendBack in a person's message makes sdMediaBrain call send_file
// with the workspace path that follows it ("SEND_BACK:inbox/x.csv").
const sdSendBack = "SEND_BACK:"

// sdPicture is a PNG as a person's picture; sdClip an Ogg voice clip.
var (
	sdPicture = llmtest.ImagePNG()
	sdClip    = []byte("OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00 a short voice clip")
)

// sdPDF is a one-page PDF reading "Revenue grew".
var sdPDF = mediatest.MinimalPDF("Revenue grew")

// sdMediaConfig lets create_image and tts (network class) run without
// asking, and leaves send_file (mutating) asked, so that the send_file
// scenarios go through an approval.
const sdMediaConfig = "tools:\n  approvals: {network: allow}\n"

// sdStartMedia starts a daemon with a scripted model (sdMediaBrain) and
// what the media scenarios need: every media model on (withMediaModels),
// create_image and tts allowed, and admin may allow send_file. platform
// points env at the chat platform's fake. It returns the model and the
// daemon's database once the daemon is ready.
func sdStartMedia(ctx context.Context, t *testing.T, admin string, platform func(env map[string]string)) (*llmtest.Server, string) {
	t.Helper()
	llm := llmtest.NewServer()
	t.Cleanup(llm.Close)
	llm.Handle(sdMediaBrain)
	addr, dir := freeAddr(t), t.TempDir()
	env := externalEnv(t, nil, llm, addr)
	platform(env)
	withMediaModels(env)
	env["SWITCHBOARD_ADMINS"] = admin
	writeConfig(t, dir, sdMediaConfig)
	startDaemon(t, dir, addr, env).waitReady(ctx)
	return llm, env["SWITCHBOARD_DATABASE_URL"]
}

// sdMediaBrain is Echo, except that a user message holding sdSendBack
// calls send_file with the path after it.
func sdMediaBrain(r llmtest.Request) llmtest.Reply {
	last := r.Messages[len(r.Messages)-1]
	if _, rest, ok := strings.Cut(last.Content, sdSendBack); ok && last.Role == "user" {
		path := strings.Fields(rest)[0]
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "send_file",
			Arguments: fmt.Sprintf(`{"path":%q,"caption":"here it is"}`, path)}}}
	}
	return llmtest.Echo(r)
}

// sdModelRead returns the user message the model read holding marker,
// waiting for the model's call (a notice to the person may come before
// it), and fails t when there is none within 30 s.
func sdModelRead(t *testing.T, llm *llmtest.Server, marker string) llmtest.Message {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m, ok := userMessageWith(llm, marker); ok {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("the model never read a message holding %q", marker)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sdNotes is a Markdown file a person shares; sdTotals a file the
// model sends back, with bytes no text handling may change.
var (
	sdNotes  = []byte("# Plan\n- ship the media feature\n- write the docs\n")
	sdTotals = []byte("id,total\n1,42\n2,\x00\xff binary tail\n")
)

// sdTranscript is what llmtest hears in sdClip.
const sdTranscript = "please book the blue room"

// sdWantPicture checks that the message holding marker gave the model
// inbox/chart.png (sdPicture) as image input with its exact bytes.
func sdWantPicture(t *testing.T, llm *llmtest.Server, marker string) {
	t.Helper()
	m := sdModelRead(t, llm, marker)
	if len(m.Images) != 1 || m.Images[0].Type != "image/png" || !bytes.Equal(m.Images[0].Data, sdPicture) {
		t.Fatalf("the model got images %+v, want the PNG's exact bytes", m.Images)
	}
	if line := fmt.Sprintf("[attachment: inbox/chart.png, image/png, %d bytes]", len(sdPicture)); !strings.Contains(m.Content, line) {
		t.Fatalf("the model read %q, want %s", m.Content, line)
	}
}

// sdWantVoice checks that the message holding marker gave the model
// sdClip's transcript, and that llmtest transcribed sdClip's exact bytes
// once.
func sdWantVoice(t *testing.T, llm *llmtest.Server, marker string) {
	t.Helper()
	if m := sdModelRead(t, llm, marker); !strings.Contains(m.Content, "[voice") || !strings.Contains(m.Content, "] "+sdTranscript) {
		t.Fatalf("the model read %q, want the voice clip's transcript", m.Content)
	}
	tr := llm.Transcriptions()
	if len(tr) != 1 || !bytes.Equal(tr[0].File, sdClip) || tr[0].Model != "whisper-1" {
		t.Fatalf("transcriptions = %+v, want one of the clip's exact bytes with whisper-1", tr)
	}
}

// sdWantDocuments checks that the message holding marker gave the model
// the text of inbox/plan.md (sdNotes) and of inbox/report.pdf (sdPDF).
func sdWantDocuments(t *testing.T, llm *llmtest.Server, marker string) {
	t.Helper()
	m := sdModelRead(t, llm, marker)
	if !strings.Contains(m.Content, "[text of inbox/plan.md]\n"+string(sdNotes)) {
		t.Fatalf("the model read %q, want plan.md's text", m.Content)
	}
	if !strings.Contains(m.Content, "[text of inbox/report.pdf]") || !strings.Contains(m.Content, "Revenue grew") {
		t.Fatalf("the model read %q, want report.pdf's text", m.Content)
	}
}

// sdWantNotFetched checks that the message holding marker named evil.png
// to the model as not downloaded, without an image, and that the
// foreign host behind hits got no request.
func sdWantNotFetched(t *testing.T, llm *llmtest.Server, marker string, hits *atomic.Int32) {
	t.Helper()
	if m := sdModelRead(t, llm, marker); !strings.Contains(m.Content, "[attachment: evil.png, not downloaded") || len(m.Images) != 0 {
		t.Fatalf("the model read %q with %d images, want evil.png named as not downloaded", m.Content, len(m.Images))
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the foreign host got %d requests, want none", n)
	}
}

// sdPerson is who writes in the Slack scenarios; an admin, so that they
// may allow send_file (a mutating tool, asked by default).
const sdPerson = "U0000ANN"

// slackMedia is one daemon serving a fake Slack with media on.
type slackMedia struct{ sl *slacktest.Server }

// mention sends text with files in a new thread of channel and returns
// the thread's ts once a reply holding want is posted there.
func (s slackMedia) mention(ctx context.Context, t *testing.T, channel, text, want string, files ...map[string]any) string {
	t.Helper()
	ts := s.send(t, channel, text, files...)
	s.waitReply(ctx, t, channel, ts, want)
	return ts
}

// send sends text with files in a new thread of channel, mentioning the
// bot, and returns the thread's ts.
func (s slackMedia) send(t *testing.T, channel, text string, files ...map[string]any) string {
	t.Helper()
	ts := slacktest.NewTS()
	m := slacktest.Msg{Channel: channel, User: sdPerson, TS: ts, SubType: "file_share",
		Text: "<@" + slacktest.BotUserID + "> " + text, Files: files}
	if _, err := s.sl.SendEvent("Ev"+ts, m.Mention()); err != nil {
		t.Fatal(err)
	}
	return ts
}

// waitReply waits for a reply holding want in thread ts of channel.
func (s slackMedia) waitReply(ctx context.Context, t *testing.T, channel, ts, want string) {
	t.Helper()
	eventually(ctx, t, fmt.Sprintf("a reply holding %q in thread %s", want, ts), func() bool {
		for _, p := range posted(s.sl, channel) {
			if p.ThreadTS == ts && strings.Contains(p.Section+p.Text, want) {
				return true
			}
		}
		return false
	})
}

// wantUploadOnce checks that, after the first before uploads to channel,
// exactly one more came, c's file into thread ts, with its exact bytes
// and the bot token, once the outbox has sent all it holds for channel;
// it returns that upload.
func (s slackMedia) wantUploadOnce(ctx context.Context, t *testing.T, dbURL, channel, ts string, before int, c sdToolFile) slacktest.Uploaded {
	t.Helper()
	eventually(ctx, t, c.tool+"'s upload", func() bool { return len(s.sl.Uploads(channel)) > before })
	waitOutboxSent(ctx, t, dbURL, channel)
	ups := s.sl.Uploads(channel)[before:]
	if len(ups) != 1 {
		t.Fatalf("%s: %d new uploads, want exactly one: %+v", c.tool, len(ups), ups)
	}
	up := ups[0]
	if up.ThreadTS != ts || !bytes.Equal(up.Body, c.body) || up.Filename != c.name || up.Auth != "Bearer "+slackBot {
		t.Fatalf("%s: upload %s (%d bytes) in thread %q with %q, want %s with its %d exact bytes in thread %s with the bot token",
			c.tool, up.Filename, len(up.Body), up.ThreadTS, up.Auth, c.name, len(c.body), ts)
	}
	return up
}

// TestE2ESlackMedia: files shared in Slack reach the model through the
// built daemon (a picture as image input, a voice clip as its
// transcript, a text file and a PDF as their text), send_file,
// create_image and tts each upload a file into the thread once, and a
// link off Slack's file host is never fetched and the person is told.
func TestE2ESlackMedia(t *testing.T) {
	ctx := testCtx(t, 90*time.Second)
	sl := slacktest.NewServer(slackBot, slackApp)
	t.Cleanup(sl.Close)
	llm, dbURL := sdStartMedia(ctx, t, "slack:"+sdPerson, func(env map[string]string) { withSlack(env, sl) })
	if err := sl.WaitConnections(ctx, 1); err != nil {
		t.Fatalf("no Socket Mode connection: %v", err)
	}
	s := slackMedia{sl: sl}
	const channel = "C0000MEDIA"

	t.Run("PictureAsImageInput", func(t *testing.T) {
		f := sl.AddFile(slacktest.SharedFile{Name: "chart.png", Mimetype: "image/png", Filetype: "png", Body: sdPicture})
		s.mention(ctx, t, channel, "what is in the chart?", "echo: what is in the chart?", f)
		sdWantPicture(t, llm, "what is in the chart?")
	})

	t.Run("VoiceClipAsTranscript", func(t *testing.T) {
		llm.EnqueueTranscription(llmtest.MediaReply{Text: sdTranscript})
		f := sl.AddFile(slacktest.SharedFile{Name: "audio_message.ogg", Mimetype: "audio/ogg", Filetype: "ogg",
			Subtype: "slack_audio", Body: sdClip})
		s.mention(ctx, t, channel, "voice here", sdTranscript, f)
		sdWantVoice(t, llm, "voice here")
	})

	t.Run("TextAndPDFAsText", func(t *testing.T) {
		txt := sl.AddFile(slacktest.SharedFile{Name: "plan.md", Mimetype: "text/markdown", Filetype: "markdown", Body: sdNotes})
		pdf := sl.AddFile(slacktest.SharedFile{Name: "report.pdf", Mimetype: "application/pdf", Filetype: "pdf", Body: sdPDF})
		s.mention(ctx, t, channel, "read these", "echo: read these", txt, pdf)
		sdWantDocuments(t, llm, "read these")
	})

	t.Run("SendFileUploadsOnceInTheThread", func(t *testing.T) {
		f := sl.AddFile(slacktest.SharedFile{Name: "totals.csv", Mimetype: "text/csv", Filetype: "csv", Body: sdTotals})
		ts := s.send(t, channel, sdSendBack+"inbox/totals.csv", f)
		im := slacktest.IM(sdPerson)
		var ask slacktest.Message
		eventually(ctx, t, "the send_file approval request", func() bool {
			for _, m := range posted(sl, im) {
				if strings.Contains(m.Section+m.Text, "send_file") {
					ask = m
					return true
				}
			}
			return false
		})
		if _, err := sl.SendInteraction(slacktest.Press{Channel: im, User: sdPerson, MessageTS: ask.TS,
			Value: slackButton(t, ask, "Allow once"), ActionID: "a1"}.BlockActions()); err != nil {
			t.Fatal(err)
		}
		s.waitReply(ctx, t, channel, ts, "tool send_file said:")
		up := s.wantUploadOnce(ctx, t, dbURL, channel, ts, 0, sdToolFile{tool: "send_file", name: "totals.csv", body: sdTotals})
		if up.Comment != "here it is" {
			t.Fatalf("totals.csv came with %q, want its caption", up.Comment)
		}
	})

	t.Run("CreateImageAndTTSUploadOnceInTheThread", func(t *testing.T) {
		for _, c := range sdToolFiles(t, llm) {
			before := len(sl.Uploads(channel))
			ts := s.send(t, channel, c.call)
			s.waitReply(ctx, t, channel, ts, "tool "+c.tool+" said: sent "+c.name)
			s.wantUploadOnce(ctx, t, dbURL, channel, ts, before, c)
		}
		sdWantMadeOnce(t, llm)
	})

	t.Run("ForeignLinkNeverFetched", func(t *testing.T) {
		elsewhere, hits := channeltest.Elsewhere(t)
		link := elsewhere.URL + "/files-pri/T0-F0FOREIGN/download/evil.png"
		f := map[string]any{"id": "F0FOREIGN", "name": "evil.png", "title": "evil.png", "mimetype": "image/png",
			"filetype": "png", "size": 9, "mode": "hosted", "url_private": link, "url_private_download": link}
		s.mention(ctx, t, channel, "look at this", "I could not download evil.png", f)
		sdWantNotFetched(t, llm, "look at this", hits)
	})
}
