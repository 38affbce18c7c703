package main

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/discord/discordtest"
)

// discordStream is a daemon with streamed answers on, on the Discord fake.
type discordStream struct {
	dc        *discordtest.Server
	llm       *llmtest.Server
	env       map[string]string
	dir, addr string
	d         *daemonProc
}

func startDiscordStream(t *testing.T) *discordStream {
	t.Helper()
	s := &discordStream{dc: discordtest.NewServer(), llm: llmtest.NewServer(), dir: t.TempDir(), addr: freeAddr(t)}
	t.Cleanup(s.dc.Close)
	t.Cleanup(s.llm.Close)
	s.env = externalEnv(t, nil, s.llm, s.addr)
	withDiscord(s.env, s.dc)
	maps.Copy(s.env, streamOn)
	return s
}

func (s *discordStream) start(t *testing.T) {
	t.Helper()
	s.d = startDaemon(t, s.dir, s.addr, s.env)
	s.d.waitReady(testCtx(t, time.Minute))
}

// ask mentions the bot in channel.
func (s *discordStream) ask(channel string) {
	s.dc.SendMessage(channel, "900000000000000001", "700000000000000009", "ann", "<@"+discordtest.BotID+"> tell me")
}

// updates returns the times of what changed what channel shows: the
// messages created and every edit.
func (s *discordStream) updates(channel string) []time.Time {
	var ats []time.Time
	for _, m := range s.dc.Messages(channel) {
		ats = append(ats, m.Created)
		for _, e := range m.History {
			ats = append(ats, e.At)
		}
	}
	slices.SortFunc(ats, time.Time.Compare)
	return ats
}

// shows reports whether channel shows exactly want, as one message.
func (s *discordStream) shows(channel, want string) bool {
	ms := s.dc.Messages(channel)
	return len(ms) == 1 && ms[0].Content == want
}

func TestE2EDiscordStreamedAnswer(t *testing.T) {
	ctx := testCtx(t, 3*time.Minute)
	s := startDiscordStream(t)
	s.start(t)
	finalOnce := func(t *testing.T, channel, want string) {
		t.Helper()
		eventually(ctx, t, "the final answer", func() bool { return s.shows(channel, want) })
		waitOutboxSent(ctx, t, s.env["SWITCHBOARD_DATABASE_URL"], channel)
		if !s.shows(channel, want) {
			t.Fatalf("channel shows %+v, want only the final answer", s.dc.Messages(channel))
		}
	}

	t.Run("AppearsWhileWritten", func(t *testing.T) {
		const channel = "800000000000000101"
		want := pacedWords("w", 30)
		paced(s.llm, want, 80*time.Millisecond)
		s.ask(channel)
		eventually(ctx, t, "the first words", func() bool { return len(s.dc.Messages(channel)) == 1 })
		if first := s.dc.Messages(channel)[0].Content; first == want {
			t.Fatalf("first shown %q, want the first words before the whole answer", first)
		}
		finalOnce(t, channel, want)
		ups := s.updates(channel)
		if len(ups) < 3 {
			t.Fatalf("%d visible updates, want the answer shown as it was written", len(ups))
		}
		updateRate(t, ups)
	})

	t.Run("RateLimitedMidway", func(t *testing.T) {
		const channel = "800000000000000102"
		want := pacedWords("r", 30)
		s.dc.Fail(discordtest.RouteEdit, 429, 1500*time.Millisecond, 1)
		paced(s.llm, want, 80*time.Millisecond)
		s.ask(channel)
		finalOnce(t, channel, want)
	})
}

// TestE2EDiscordStreamAcrossKill9: killed (-9) mid-answer, the restarted
// daemon completes the half-written message in place.
func TestE2EDiscordStreamAcrossKill9(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	s := startDiscordStream(t)
	s.start(t)
	const channel = "800000000000000103"
	paced(s.llm, pacedWords("dead", 60), 150*time.Millisecond)
	want := pacedWords("whole", 12)
	paced(s.llm, want, 20*time.Millisecond)
	s.ask(channel)
	eventually(ctx, t, "some words streamed", func() bool {
		ms := s.dc.Messages(channel)
		return len(ms) == 1 && strings.Contains(ms[0].Content, "dead3")
	})
	s.d.kill9()
	s.start(t)
	eventually(ctx, t, "the answer completed after the restart", func() bool { return s.shows(channel, want) })
	waitOutboxSent(ctx, t, s.env["SWITCHBOARD_DATABASE_URL"], channel)
	if !s.shows(channel, want) {
		t.Fatalf("channel shows %+v, want only %q", s.dc.Messages(channel), want)
	}
}
