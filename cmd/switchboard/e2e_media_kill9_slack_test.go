package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
	"github.com/switchboard-chat/switchboard/channels/slack/slacktest"
)

// mediaDaemon is a daemon with every media model on and the media tools
// allowed (mediaConfig), against the fake LLM and a chat platform's fake,
// that a test may kill and start again on the same stores.
type mediaDaemon struct {
	llm       *llmtest.Server
	env       map[string]string
	dir, addr string
	d         *daemonProc
}

// startMediaDaemon starts a mediaDaemon; platform points its env at the
// chat platform's fake.
func startMediaDaemon(ctx context.Context, t *testing.T, platform func(env map[string]string)) *mediaDaemon {
	t.Helper()
	e := &mediaDaemon{llm: llmtest.NewServer(), dir: t.TempDir(), addr: freeAddr(t)}
	t.Cleanup(e.llm.Close)
	e.env = externalEnv(t, nil, e.llm, e.addr)
	withMediaModels(e.env)
	platform(e.env)
	writeConfig(t, e.dir, mediaConfig)
	e.restart(ctx, t)
	return e
}

// restart starts the daemon again on the same stores and configuration
// (the previous one must have stopped) and waits until it is ready.
func (e *mediaDaemon) restart(ctx context.Context, t *testing.T) {
	t.Helper()
	e.d = startDaemon(t, e.dir, e.addr, e.env)
	e.d.waitReady(ctx)
}

// bigNoisyPNG is a picture larger than what loopback sockets buffer, so
// that a client killed while uploading it dies with bytes unsent.
func bigNoisyPNG(t *testing.T, seed uint64) []byte {
	t.Helper()
	return noisyPNG(t, 1100, 1100, seed)
}

// killMidUpload waits until st stopped the upload, kills the daemon
// (-9), starts a new one and releases the stalled upload, which must
// then fail: the dead daemon never sent its last bytes.
func killMidUpload(ctx context.Context, t *testing.T, e *mediaDaemon, st *channeltest.Stall) {
	t.Helper()
	select {
	case <-st.Reached():
	case <-ctx.Done():
		t.Fatal("the picture's upload never began")
	}
	e.d.kill9()
	e.restart(ctx, t)
	st.Release()
	select {
	case <-st.Finished():
	case <-ctx.Done():
		t.Fatal("the released upload never ended")
	}
	if st.Err() == nil {
		t.Fatal("the killed daemon's upload arrived whole; the test needs a picture larger than the sockets buffer")
	}
}

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
