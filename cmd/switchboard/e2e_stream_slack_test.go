package main

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/slack/slacktest"
)

// slackLiveCalls returns the times of the calls that changed what channel
// shows: streams begun and appended to, and edits.
func slackLiveCalls(sl *slacktest.Server, channel string) []time.Time {
	var ats []time.Time
	for _, method := range []string{"chat.startStream", "chat.appendStream", "chat.update"} {
		for _, m := range sl.Posted(channel, method) {
			ats = append(ats, m.At)
		}
	}
	slices.SortFunc(ats, time.Time.Compare)
	return ats
}

func TestE2ESlackStreamedAnswer(t *testing.T) {
	ctx := testCtx(t, 3*time.Minute)
	llm := llmtest.NewServer()
	t.Cleanup(llm.Close)
	sl, _ := startSlackDaemonWith(t, ctx, llm, streamOn)

	ask := func(t *testing.T, channel, event string) {
		t.Helper()
		ts := slacktest.NewTS()
		if _, err := sl.SendEvent(event, slacktest.Msg{Channel: channel, User: "U0000ANN", TS: ts,
			Text: "<@" + slacktest.BotUserID + "> tell me"}.Mention()); err != nil {
			t.Fatal(err)
		}
	}
	finalOnce := func(t *testing.T, channel, want string) {
		t.Helper()
		eventually(ctx, t, "the final answer", func() bool {
			v := sl.Visible(channel)
			return len(v) == 1 && v[0] == want && !sl.Streaming(channel, sl.VisibleTS(channel)[0])
		})
		// Nothing more comes: the answer is not sent twice.
		time.Sleep(1500 * time.Millisecond)
		if v := sl.Visible(channel); len(v) != 1 || v[0] != want {
			t.Fatalf("channel shows %q, want only the final answer", v)
		}
	}

	t.Run("AppearsWhileWritten", func(t *testing.T) {
		const channel = "C0000LIVE1"
		want := pacedWords("w", 30)
		paced(llm, want, 80*time.Millisecond) // about 2.4 s of writing
		ask(t, channel, "EvLive1")
		eventually(ctx, t, "the first words", func() bool { return len(sl.Posted(channel, "chat.startStream")) == 1 })
		if first := sl.Visible(channel); len(first) != 1 || first[0] == want {
			t.Fatalf("first shown %q, want the first words before the whole answer", first)
		}
		finalOnce(t, channel, want)
		if n := len(sl.Posted(channel, "chat.postMessage")); n != 0 {
			t.Fatalf("%d messages posted besides the stream", n)
		}
		updateRate(t, slackLiveCalls(sl, channel))
		t.Logf("visible updates: %d", len(slackLiveCalls(sl, channel)))
	})

	t.Run("RateLimitedMidway", func(t *testing.T) {
		const channel = "C0000LIVE2"
		want := pacedWords("r", 30)
		sl.RateLimit("chat.appendStream", 2, 1)
		paced(llm, want, 80*time.Millisecond)
		ask(t, channel, "EvLive2")
		finalOnce(t, channel, want)
	})
}

// TestE2ESlackStreamAcrossKill9: the daemon is killed (-9) while an
// answer streams into the thread. The restarted daemon's run takes the
// half-written message over: the thread ends with one message, exactly
// the stored reply, and no half-written one beside it.
func TestE2ESlackStreamAcrossKill9(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	sl := slacktest.NewServer(slackBot, slackApp)
	t.Cleanup(sl.Close)
	llm := llmtest.NewServer()
	t.Cleanup(llm.Close)
	dir, addr := t.TempDir(), freeAddr(t)
	env := externalEnv(t, nil, llm, addr)
	withSlack(env, sl)
	maps.Copy(env, streamOn)
	d := startDaemon(t, dir, addr, env)
	d.waitReady(ctx)
	if err := sl.WaitConnections(ctx, 1); err != nil {
		t.Fatalf("no Socket Mode connection: %v", err)
	}
	const channel = "C0000LIVEK"
	paced(llm, pacedWords("dead", 60), 150*time.Millisecond) // 9 s: killed midway
	want := pacedWords("whole", 12)
	paced(llm, want, 20*time.Millisecond) // the restarted run's answer
	if _, err := sl.SendEvent("EvLiveK", slacktest.Msg{Channel: channel, User: "U0000ANN", TS: slacktest.NewTS(),
		Text: "<@" + slacktest.BotUserID + "> tell me"}.Mention()); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "some words streamed", func() bool {
		v := sl.Visible(channel)
		return len(v) == 1 && strings.Contains(v[0], "dead3")
	})
	d.kill9()
	half := sl.Visible(channel)
	d = startDaemon(t, dir, addr, env)
	d.waitReady(ctx)
	eventually(ctx, t, "the answer completed after the restart", func() bool {
		v := sl.Visible(channel)
		return len(v) == 1 && v[0] == want
	})
	waitOutboxSent(ctx, t, env["SWITCHBOARD_DATABASE_URL"], channel)
	if v := sl.Visible(channel); len(v) != 1 || v[0] != want {
		t.Fatalf("thread shows %q (half-written before the restart: %q), want only %q", v, half, want)
	}
}
