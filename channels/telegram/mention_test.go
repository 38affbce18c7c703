package telegram_test

import (
	"strconv"
	"testing"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/telegram"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

// requireMention is a harness whose channel passes on only the group
// messages meant for the bot.
func requireMention(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t, func(o *telegram.Options) { o.RequireMention = true })
	h.Start(nil)
	h.waitPolling()
	return h
}

// noMoreInbound fails when an event beyond those already read reached the
// handler. Updates of one chat are handled in order, so once the chat's
// last update was read, nothing earlier can still arrive.
func noMoreInbound(t *testing.T, h *harness) {
	t.Helper()
	select {
	case in := <-h.Inbound:
		t.Errorf("unexpected inbound %+v", in)
	default:
	}
}

func TestRequireMentionPassesOnlyMessagesForTheBot(t *testing.T) {
	h := requireMention(t)
	const group = -500
	bot := "@" + telegramtest.BotUsername
	botMsg, err := h.ch.Send(h.Ctx(), channels.Outbound{To: channels.Address{Platform: "telegram", ChatID: "-500"}, Text: "I am here"})
	if err != nil {
		t.Fatal(err)
	}
	botID, _ := strconv.Atoi(botMsg)
	_, userMsg := h.fake.PushMessage(telegramtest.Incoming{ChatID: group, UserID: 6, UserName: "Cy", Text: "lunch?"})
	topicStart := map[string]any{"reply_to_message": map[string]any{"message_id": 1, "date": 1,
		"chat":                map[string]any{"id": group, "type": "supergroup", "title": "t"},
		"from":                map[string]any{"id": h.fake.BotID(), "is_bot": true, "first_name": "bot"},
		"forum_topic_created": map[string]any{"name": "ops", "icon_color": 1}}}

	sends := []struct {
		in   telegramtest.Incoming
		want string // the text the handler gets; "" when dropped
	}{
		{telegramtest.Incoming{Text: "just chatting"}, ""},
		{telegramtest.Incoming{Text: bot + ", what is the weather?"}, "what is the weather?"},
		{telegramtest.Incoming{Text: "ask " + bot + " later"}, "ask " + bot + " later"},
		{telegramtest.Incoming{Text: "@SWITCHBOARD_TEST_BOT shouting"}, "shouting"},
		{telegramtest.Incoming{Text: "@someone_else hi"}, ""},
		{telegramtest.Incoming{Text: "thanks, that helped", ReplyTo: botID}, "thanks, that helped"},
		{telegramtest.Incoming{Text: "me too", ReplyTo: userMsg}, ""},
		{telegramtest.Incoming{Text: "in the topic", Extra: topicStart}, ""},
		{telegramtest.Incoming{Text: "/help"}, "/help"},
		{telegramtest.Incoming{Text: "/help@" + telegramtest.BotUsername}, "/help@" + telegramtest.BotUsername},
		{telegramtest.Incoming{Text: "/help@other_bot"}, ""},
		{telegramtest.Incoming{Text: "/usr/bin is gone"}, ""},
		{telegramtest.Incoming{Text: "hey Ada", Entities: []telegramtest.Entity{{Type: "text_mention", Offset: 4, Length: 3, UserID: h.fake.BotID()}}}, "hey Ada"},
		{telegramtest.Incoming{Text: "hey Bo", Entities: []telegramtest.Entity{{Type: "text_mention", Offset: 4, Length: 2, UserID: 6}}}, ""},
		{telegramtest.Incoming{Text: "last " + bot}, "last " + bot},
	}
	var want []string
	for _, s := range sends {
		s.in.ChatID, s.in.ChatType, s.in.UserID, s.in.UserName = group, "supergroup", 5, "Bo"
		h.fake.PushMessage(s.in)
		if s.want != "" {
			want = append(want, s.want)
		}
	}
	for i, w := range want {
		if in := h.Next(); in.Text != w || in.ChatID != "-500" {
			t.Errorf("inbound %d = %q in %s, want %q", i, in.Text, in.ChatID, w)
		}
	}
	noMoreInbound(t, h)
	if got := h.fake.Messages(group); len(got) != 1 {
		t.Errorf("the group got %d bot messages, want only the bot's own first one: %+v", len(got), got)
	}
}

func TestRequireMentionLeavesPrivateChatsAndPresses(t *testing.T) {
	h := requireMention(t)
	h.fake.SendText(8, 8, "Di", "no mention needed here")
	if in := h.Next(); in.Text != "no mention needed here" || !in.Direct {
		t.Errorf("private inbound = %+v", in)
	}
	id, err := h.ch.Send(h.Ctx(), channels.Outbound{To: channels.Address{Platform: "telegram", ChatID: "-501"}, Text: "Allow?",
		Buttons: [][]channels.Button{{{Label: "Allow", Data: "ap:1:once"}}}})
	if err != nil {
		t.Fatal(err)
	}
	mid, _ := strconv.Atoi(id)
	h.fake.PressButton(-501, 9, mid, "ap:1:once")
	if in := h.Next(); in.Press == nil || in.Press.Data != "ap:1:once" {
		t.Errorf("press in a group = %+v", in)
	}
}

// An album in a group counts when its caption mentions the bot, on
// whichever part carries it.
func TestRequireMentionAlbums(t *testing.T) {
	h := requireMention(t)
	const group = -502
	photo := func(album, caption string) map[string]any {
		m := map[string]any{"media_group_id": album, "photo": []any{map[string]any{"file_id": "p", "file_unique_id": "p", "width": 1, "height": 1}}}
		if caption != "" {
			m["caption"] = caption
			m["caption_entities"] = []any{map[string]any{"type": "mention", "offset": 0, "length": len(telegramtest.BotUsername) + 1}}
		}
		return m
	}
	push := func(extra map[string]any) {
		h.fake.PushMessage(telegramtest.Incoming{ChatID: group, UserID: 5, Extra: extra})
	}
	push(photo("a1", ""))
	push(photo("a1", ""))
	push(photo("a2", ""))
	push(photo("a2", "@"+telegramtest.BotUsername+" what is this?"))
	h.fake.SendTextInChat(group, 0, 5, "Bo", "@"+telegramtest.BotUsername+" and done")
	if in := h.Next(); in.Text != "what is this?" || len(in.Attachments) != 2 {
		t.Errorf("mentioned album = %q with %d attachments", in.Text, len(in.Attachments))
	}
	if in := h.Next(); in.Text != "and done" {
		t.Errorf("next inbound = %+v, want the text", in)
	}
	noMoreInbound(t, h)
}
