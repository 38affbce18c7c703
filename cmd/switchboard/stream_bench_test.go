package main

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/discord/discordtest"
	"github.com/switchboard-chat/switchboard/channels/slack/slacktest"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
	"github.com/switchboard-chat/switchboard/storage/redis/redistest"
)

// The pace of the benchmark's model: streamWords words, one every
// streamPace (about 2 s of writing per answer).
const (
	streamWords = 40
	streamPace  = 50 * time.Millisecond
)

// liveChat is one platform's fake as the streaming benchmark sees it.
type liveChat interface {
	// env points the daemon at the fake.
	env(env map[string]string)
	// ask sends question i, in a chat of its own, and returns that chat.
	ask(b *testing.B, i int) string
	// updates returns when what chat shows changed (messages or drafts
	// begun, appended to, edited), oldest first.
	updates(chat string) []time.Time
	// shown returns the texts of the bot's messages chat shows.
	shown(chat string) []string
}

// BenchmarkLiveAnswer measures streamed answers through the built daemon
// (`switchboard serve`, the external PostgreSQL and Redis, a platform's
// fake, the scripted LLM writing streamWords words one per streamPace):
// first-visible-ms runs from the model writing its first word to the
// chat first showing text (p50 and p95 over the answers); updates/s is
// the visible updates per second of each answer, averaged; lost and
// doubled count answers whose chat does not end with exactly the stored
// reply, once. Each answer runs alone in a chat of its own.
func BenchmarkLiveAnswer(b *testing.B) {
	for _, p := range []struct {
		name string
		chat func(b *testing.B) liveChat
	}{
		{"telegram-private", newTelegramLive(false)},
		{"telegram-group", newTelegramLive(true)},
		{"slack", newSlackLive},
		{"discord", newDiscordLive},
	} {
		b.Run(p.name, func(b *testing.B) { benchLive(b, p.chat(b)) })
	}
}

func benchLive(b *testing.B, chat liveChat) {
	llm := llmtest.NewServer()
	b.Cleanup(llm.Close)
	env := map[string]string{
		"SWITCHBOARD_LLM_BASE_URL": llm.URL(), "SWITCHBOARD_LLM_MODEL": "test-model",
		"SWITCHBOARD_DATABASE_URL": pgtest.New(b), "SWITCHBOARD_REDIS_URL": redistest.URL(b),
		"SWITCHBOARD_REDIS_PREFIX": redistest.Prefix(b), "SWITCHBOARD_ACCESS_MODE": "open",
		"SWITCHBOARD_DATA_DIR": b.TempDir(),
	}
	maps.Copy(env, streamOn)
	chat.env(env)
	p := startServe(b, b.TempDir(), env)
	p.untilReady(b, time.Now())
	defer p.stop(b)
	var firsts []time.Duration
	var rates []float64
	lost, doubled := 0, 0
	b.ResetTimer()
	for i := range b.N {
		want := pacedWords(fmt.Sprintf("a%d-", i), streamWords)
		llm.Enqueue(llmtest.Reply{Text: want, Pace: streamPace})
		c := chat.ask(b, i)
		deadline := time.Now().Add(30 * time.Second)
		for !slices.Contains(chat.shown(c), want) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(1500 * time.Millisecond) // anything doubled or late shows by now
		switch got := chat.shown(c); {
		case !slices.Contains(got, want):
			lost++
		case len(got) != 1:
			doubled++
		}
		reqs := llm.Requests()
		ups := chat.updates(c)
		if len(ups) == 0 || len(reqs) <= i || reqs[i].FirstWord.IsZero() {
			continue
		}
		firsts = append(firsts, ups[0].Sub(reqs[i].FirstWord))
		if span := ups[len(ups)-1].Sub(ups[0]).Seconds(); span > 0 {
			rates = append(rates, float64(len(ups)-1)/span)
		}
	}
	b.StopTimer()
	slices.Sort(firsts)
	if len(firsts) > 0 {
		b.ReportMetric(ms(firsts[len(firsts)/2]), "first-visible-p50-ms")
		b.ReportMetric(ms(firsts[(len(firsts)*95+99)/100-1]), "first-visible-p95-ms")
	}
	var sum float64
	for _, r := range rates {
		sum += r
	}
	if len(rates) > 0 {
		b.ReportMetric(sum/float64(len(rates)), "updates/s")
	}
	b.ReportMetric(float64(lost), "lost")
	b.ReportMetric(float64(doubled), "doubled")
}

// slackLive is liveChat on the Slack fake: each question in a channel
// of its own, mentioning the bot, answered in its thread.
type slackLive struct{ sl *slacktest.Server }

func newSlackLive(b *testing.B) liveChat {
	sl := slacktest.NewServer(slackBot, slackApp)
	b.Cleanup(sl.Close)
	return slackLive{sl}
}

func (s slackLive) env(env map[string]string) { withSlack(env, s.sl) }

func (s slackLive) ask(b *testing.B, i int) string {
	channel := fmt.Sprintf("C%09d", 500000+i)
	if _, err := s.sl.SendEvent(fmt.Sprintf("EvBench%d", i), slacktest.Msg{Channel: channel, User: "U0000ANN",
		TS: slacktest.NewTS(), Text: "<@" + slacktest.BotUserID + "> tell me"}.Mention()); err != nil {
		b.Fatal(err)
	}
	return channel
}

func (s slackLive) updates(channel string) []time.Time { return slackLiveCalls(s.sl, channel) }

func (s slackLive) shown(channel string) []string { return s.sl.Visible(channel) }

// discordLive is liveChat on the Discord fake: each question in a
// channel of its own, mentioning the bot.
type discordLive struct{ s *discordStream }

func newDiscordLive(b *testing.B) liveChat {
	dc := discordtest.NewServer()
	b.Cleanup(dc.Close)
	return discordLive{&discordStream{dc: dc}}
}

func (d discordLive) env(env map[string]string) { withDiscord(env, d.s.dc) }

func (d discordLive) ask(_ *testing.B, i int) string {
	channel := fmt.Sprint(800000000000500000 + i)
	d.s.ask(channel)
	return channel
}

func (d discordLive) updates(channel string) []time.Time { return d.s.updates(channel) }

func (d discordLive) shown(channel string) []string {
	var out []string
	for _, m := range d.s.dc.Messages(channel) {
		out = append(out, m.Content)
	}
	return out
}

// telegramLive is liveChat on the Telegram fake: each question in a
// private chat of its own (answered in drafts, then one message), or in
// a group of its own, mentioning the bot (one message edited in place).
type telegramLive struct {
	tg    *telegramtest.Server
	group bool
}

func newTelegramLive(group bool) func(b *testing.B) liveChat {
	return func(b *testing.B) liveChat {
		tg := telegramtest.NewServer(testToken)
		b.Cleanup(tg.Close)
		return telegramLive{tg, group}
	}
}

func (l telegramLive) env(env map[string]string) {
	env["SWITCHBOARD_TELEGRAM_TOKEN"] = testToken
	env["SWITCHBOARD_TELEGRAM_API_URL"] = l.tg.URL()
}

func (l telegramLive) ask(_ *testing.B, i int) string {
	if l.group {
		group := int64(-1008000000 - i)
		tgAskGroup(l.tg, group)
		return strconv.FormatInt(group, 10)
	}
	chat := int64(8000 + i)
	l.tg.SendText(chat, chat, "Ann", "tell me")
	return strconv.FormatInt(chat, 10)
}

func (l telegramLive) chat(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

func (l telegramLive) updates(chat string) []time.Time { return tgUpdates(l.tg, l.chat(chat)) }

func (l telegramLive) shown(chat string) []string { return tgShown(l.tg, l.chat(chat)) }
