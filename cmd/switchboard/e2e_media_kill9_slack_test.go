package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/slack/slacktest"
)

// TestE2ESlackFileOnceAcrossKill9: a picture create_image made reaches
// the Slack thread exactly once, with its exact bytes, when the daemon
// is killed (-9) while uploading it: the interrupted upload is never
// shared, and the restarted daemon uploads the file anew once the dead
// one's claim on the outbox row lapses.
func TestE2ESlackFileOnceAcrossKill9(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	sl := slacktest.NewServer(slackBot, slackApp)
	t.Cleanup(sl.Close)
	e := startMediaDaemon(ctx, t, func(env map[string]string) { withSlack(env, sl) })
	defer func() { e.d.stop() }()
	if err := sl.WaitConnections(ctx, 1); err != nil {
		t.Fatalf("no Socket Mode connection: %v", err)
	}
	const channel = "C0000KILL9"
	pic := bigNoisyPNG(t, 11)
	e.llm.EnqueueImage(llmtest.MediaReply{Data: pic})
	st := sl.StallUpload(1000)
	s := slackMedia{sl: sl}
	ts := s.send(t, channel, `CALL_TOOL:create_image {"prompt":"static on an old TV"}`)

	killMidUpload(ctx, t, e, st)
	if n := len(sl.Uploads(channel)); n != 0 {
		t.Fatalf("the interrupted upload was shared %d times", n)
	}
	s.waitReply(ctx, t, channel, ts, "tool create_image said: sent")
	eventually(ctx, t, "the picture shared after the restart", func() bool { return len(sl.Uploads(channel)) > 0 })
	waitOutboxSent(ctx, t, e.env["SWITCHBOARD_DATABASE_URL"], channel)
	ups := sl.Uploads(channel)
	if len(ups) != 1 || !bytes.Equal(ups[0].Body, pic) || ups[0].ThreadTS != ts {
		t.Fatalf("the thread got %d uploads; want the %d-byte picture once in thread %s", len(ups), len(pic), ts)
	}
}
