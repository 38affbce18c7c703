package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/discord/discordtest"
)

// TestE2EDiscordFileOnceAcrossKill9: a picture create_image made reaches
// the Discord channel exactly once, with its exact bytes, when the
// daemon is killed (-9) while uploading it: the interrupted upload is
// never a message, and the restarted daemon uploads the file anew once
// the dead one's claim on the outbox row lapses.
func TestE2EDiscordFileOnceAcrossKill9(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	dc := discordtest.NewServer()
	t.Cleanup(dc.Close)
	e := startMediaDaemon(ctx, t, func(env map[string]string) { withDiscord(env, dc) })
	defer func() { e.d.stop() }()
	// A message pushed before the daemon identified reaches no session.
	eventually(ctx, t, "the daemon's gateway session", func() bool { return len(dc.Identifies()) > 0 })
	pic := bigNoisyPNG(t, 13)
	e.llm.EnqueueImage(llmtest.MediaReply{Data: pic})
	st := dc.StallUpload(1000)
	d := discordMedia{dc: dc}
	d.send(`CALL_TOOL:create_image {"prompt":"static on an old TV"}`, false)

	killMidUpload(ctx, t, e, st)
	if n := len(withFiles(dc, sdChannel)); n != 0 {
		t.Fatalf("the interrupted upload became %d messages", n)
	}
	// Discord's markdown escapes the tool name's underscore. The answer
	// replies to the asking message only when the killed daemon stored it;
	// a run the restarted daemon resumes answers without a reference.
	d.waitMessage(ctx, t, sdChannel, "create_image's result", func(m discordtest.Message) bool {
		return strings.Contains(m.Content, "said: sent image.png")
	})
	eventually(ctx, t, "the picture posted after the restart", func() bool { return len(withFiles(dc, sdChannel)) > 0 })
	waitOutboxSent(ctx, t, e.env["SWITCHBOARD_DATABASE_URL"], sdChannel)
	sent := withFiles(dc, sdChannel)
	if len(sent) != 1 || len(sent[0].Files) != 1 || !bytes.Equal(sent[0].Files[0].Data, pic) || !sent[0].Multipart {
		t.Fatalf("the channel got %d messages with files; want one with the %d-byte picture", len(sent), len(pic))
	}
}
