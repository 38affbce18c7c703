package main

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

// tgShown returns what a reader sees of the bot's messages in chat.
func tgShown(tg *telegramtest.Server, chat int64) []string {
	var out []string
	for _, m := range tg.Messages(chat) {
		out = append(out, m.Visible)
	}
	return out
}

// tgUpdates returns when what chat shows changed: drafts, messages sent
// and edits, oldest first.
func tgUpdates(tg *telegramtest.Server, chat int64) []time.Time {
	var ats []time.Time
	for _, d := range tg.Drafts(chat) {
		ats = append(ats, d.Time)
	}
	for _, m := range tg.Messages(chat) {
		ats = append(ats, m.Sent)
	}
	for _, e := range tg.Edits(chat) {
		ats = append(ats, e.Time)
	}
	slices.SortFunc(ats, time.Time.Compare)
	return ats
}

// tgAskGroup mentions the bot in group.
func tgAskGroup(tg *telegramtest.Server, group int64) {
	tg.PushMessage(telegramtest.Incoming{ChatID: group, ChatType: "supergroup", UserID: 71, UserName: "Ada",
		Text: "@" + telegramtest.BotUsername + " tell me"})
}

func TestE2ETelegramStreamedAnswer(t *testing.T) {
	ctx := testCtx(t, 3*time.Minute)
	e := startTelegramE2E(ctx, t, func(env map[string]string) { maps.Copy(env, streamOn) })
	tg := e.tg
	finalOnce := func(t *testing.T, chat int64, want string) {
		t.Helper()
		eventually(ctx, t, "the final answer", func() bool { return slices.Equal(tgShown(tg, chat), []string{want}) })
		waitOutboxSent(ctx, t, e.env["SWITCHBOARD_DATABASE_URL"], strconv.FormatInt(chat, 10))
		if got := tgShown(tg, chat); !slices.Equal(got, []string{want}) {
			t.Fatalf("chat shows %q, want only the final answer", got)
		}
	}

	t.Run("PrivateChatDrafts", func(t *testing.T) {
		const chat = 7101
		want := pacedWords("p", 30)
		paced(e.llm, want, 80*time.Millisecond)
		tg.SendText(chat, chat, "Ann", "tell me")
		eventually(ctx, t, "a draft", func() bool { return len(tg.Drafts(chat)) > 0 })
		if len(tg.Messages(chat)) != 0 {
			t.Fatalf("a message before the answer was complete: %q", tgShown(tg, chat))
		}
		finalOnce(t, chat, want)
		drafts := tg.Drafts(chat)
		if len(drafts) < 2 {
			t.Fatalf("%d drafts, want the answer shown as it was written", len(drafts))
		}
		updateRate(t, tgUpdates(tg, chat))
	})

	t.Run("GroupEditedInPlace", func(t *testing.T) {
		const group = -1007770101
		want := pacedWords("g", 30)
		paced(e.llm, want, 80*time.Millisecond)
		tgAskGroup(tg, group)
		eventually(ctx, t, "the first words", func() bool { return len(tg.Messages(group)) == 1 })
		if first := tgShown(tg, group)[0]; first == want {
			t.Fatalf("first shown %q, want the first words before the whole answer", first)
		}
		finalOnce(t, group, want)
		if len(tg.Edits(group)) < 2 {
			t.Fatalf("%d edits, want the answer edited in as it was written", len(tg.Edits(group)))
		}
		updateRate(t, tgUpdates(tg, group))
	})

	t.Run("FloodControlMidway", func(t *testing.T) {
		const group = -1007770102
		want := pacedWords("f", 30)
		paced(e.llm, want, 80*time.Millisecond)
		tgAskGroup(tg, group)
		eventually(ctx, t, "the first words", func() bool { return len(tg.Messages(group)) == 1 })
		tg.FloodChat(group, 2) // the next call to the chat: 429, retry after 2 s
		finalOnce(t, group, want)
	})
}

// TestE2ETelegramStreamAcrossKill9: killed (-9) mid-answer in a group,
// the restarted daemon completes the half-written message in place; in a
// private chat the draft is superseded by the one final message.
func TestE2ETelegramStreamAcrossKill9(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	e := startTelegramE2E(ctx, t, func(env map[string]string) { maps.Copy(env, streamOn) })
	tg := e.tg
	const group, private = -1007770103, 7103
	for _, chat := range []int64{group, private} {
		paced(e.llm, pacedWords("dead", 60), 150*time.Millisecond)
		if chat == group {
			tgAskGroup(tg, group)
		} else {
			tg.SendText(private, private, "Ann", "tell me")
		}
	}
	eventually(ctx, t, "both answers streaming", func() bool {
		ms := tg.Messages(group)
		ds := tg.Drafts(private)
		return len(ms) == 1 && strings.Contains(ms[0].Visible, "dead3") && len(ds) > 0 && strings.Contains(ds[len(ds)-1].Visible, "dead3")
	})
	e.d.kill9()
	want := pacedWords("whole", 12)
	e.llm.Handle(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: want, Pace: 20 * time.Millisecond} })
	e.restart(ctx, t)
	for _, chat := range []int64{group, private} {
		eventually(ctx, t, "the answer completed after the restart", func() bool {
			return slices.Equal(tgShown(tg, chat), []string{want})
		})
		waitOutboxSent(ctx, t, e.env["SWITCHBOARD_DATABASE_URL"], strconv.FormatInt(chat, 10))
		if got := tgShown(tg, chat); !slices.Equal(got, []string{want}) {
			t.Fatalf("chat %d shows %q, want only %q", chat, got, want)
		}
	}
}
