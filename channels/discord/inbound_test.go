package discord_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/discord"
	"github.com/switchboard-chat/switchboard/channels/discord/discordtest"
)

func TestReceiveMessages(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.startReady()

	id := h.fake.SendMessage(channelID, guildID, userID, "Ann", "<@"+discordtest.BotID+">  hello *bot*")
	in := h.Next()
	want := channels.Inbound{
		Platform: "discord", ChatID: channelID, UserID: userID, UserName: "Ann", Text: "hello *bot*",
		MessageID: id, ExternalID: id,
	}
	if !reflect.DeepEqual(in, want) {
		t.Errorf("guild message = %+v\nwant            %+v", in, want)
	}

	id = h.fake.SendMessage(dmID, "", otherID, "Bo", "<@!"+discordtest.BotID+"> in private")
	in = h.Next()
	if in.ChatID != dmID || !in.Direct || in.Text != "in private" || in.UserID != otherID || in.MessageID != id {
		t.Errorf("direct message = %+v", in)
	}

	h.fake.SendMessage(channelID, guildID, userID, "Ann", "ask <@"+otherID+"> and <@"+discordtest.BotID+">")
	if in := h.Next(); in.Text != "ask <@"+otherID+"> and <@"+discordtest.BotID+">" {
		t.Errorf("only a leading bot mention may be stripped: %q", in.Text)
	}
}

func TestIdentifiesWithIntents(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.startReady()
	ids := h.fake.Identifies()
	if len(ids) != 1 {
		t.Fatalf("identifies = %+v", ids)
	}
	if ids[0].Intents != int(discord.Intents) || ids[0].Intents&(1<<15) == 0 {
		t.Errorf("intents = %b, want %b with MESSAGE_CONTENT", ids[0].Intents, discord.Intents)
	}
	if ids[0].Token != "Bot "+token {
		t.Errorf("identify token = %q", ids[0].Token)
	}
}

func TestIgnoresBotsWebhooksAndSystemMessages(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.startReady()
	h.fake.PushMessage(discordtest.Incoming{ChannelID: channelID, GuildID: guildID, UserID: discordtest.BotID, Bot: true, Text: "mine"})
	h.fake.PushMessage(discordtest.Incoming{ChannelID: channelID, GuildID: guildID, UserID: otherID, Bot: true, Text: "other bot"})
	h.fake.PushMessage(discordtest.Incoming{ChannelID: channelID, GuildID: guildID, UserID: otherID, WebhookID: "9", Text: "hook"})
	h.fake.PushMessage(discordtest.Incoming{ChannelID: channelID, GuildID: guildID, UserID: otherID, Type: 7, Text: "joined"})
	h.fake.PushMessage(discordtest.Incoming{ChannelID: channelID, GuildID: guildID, UserID: userID, Text: "  "})
	h.fake.SendMessage(channelID, guildID, userID, "Ann", "real")
	// Events are handled in order, so once "real" arrives the rest were dropped.
	if in := h.Next(); in.Text != "real" {
		t.Errorf("first event reaching the handler = %+v, want the person's message", in)
	}
	select {
	case in := <-h.Inbound:
		t.Errorf("unexpected event %+v", in)
	default:
	}
}

func TestButtonPressIsAcknowledgedThenDelivered(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	type seen struct {
		in   channels.Inbound
		acks []discordtest.InteractionResponse
	}
	events := make(chan seen, 10)
	h.Start(func(_ context.Context, in channels.Inbound) error {
		events <- seen{in: in, acks: h.fake.InteractionResponses()}
		return nil
	})
	h.WaitReady()
	ctx := h.Ctx()
	h.fake.AddChannel(channelID, guildID)
	mid, err := h.ch.Send(ctx, channels.Outbound{To: to(channelID), Text: "Allow `rm -rf /tmp/x`?",
		Buttons: [][]channels.Button{{{Label: "Allow once", Data: "ap:abcdefghij0123456789:o"}, {Label: "Deny", Data: "ap:abcdefghij0123456789:d"}}}})
	if err != nil {
		t.Fatal(err)
	}
	iid := h.fake.PressButton(channelID, mid, userID, "ap:abcdefghij0123456789:d")
	var got seen
	select {
	case got = <-events:
	case <-ctx.Done():
		t.Fatalf("press not delivered; logs:\n%s", h.Log)
	}
	in := got.in
	if in.Press == nil || in.Press.Data != "ap:abcdefghij0123456789:d" || in.Press.MessageID != mid || in.Press.ID == "" {
		t.Fatalf("press = %+v", in.Press)
	}
	if in.ChatID != channelID || in.UserID != userID || in.MessageID != mid || in.Text != "" || in.Direct || in.ExternalID != iid {
		t.Errorf("press inbound = %+v", in)
	}
	if len(got.acks) != 1 || got.acks[0].InteractionID != iid || got.acks[0].Type != 6 {
		t.Fatalf("responses when the handler ran = %+v, want one deferred update (6) for %s", got.acks, iid)
	}

	if err := h.ch.AnswerPress(ctx, *in.Press, "Denied by **Ann** @everyone"); err != nil {
		t.Fatalf("AnswerPress: %v", err)
	}
	fs := h.fake.Followups()
	if len(fs) != 1 || fs[0].InteractionID != iid || fs[0].Flags != 64 || !fs[0].AllowedMentions.NoneAllowed() {
		t.Fatalf("followups = %+v, want one ephemeral (64) without mentions", fs)
	}
	if !strings.HasPrefix(fs[0].Content, "Denied by **Ann** @") || strings.Contains(fs[0].Content, "@everyone") {
		t.Errorf("followup content = %q", fs[0].Content)
	}
	if err := h.ch.AnswerPress(ctx, *in.Press, ""); err != nil || len(h.fake.Followups()) != 1 {
		t.Errorf("an empty answer: err %v, %d followups; want nothing sent", err, len(h.fake.Followups()))
	}
	if err := h.ch.AnswerPress(ctx, channels.ButtonPress{ID: "42"}, "x"); !errors.Is(err, channels.ErrPermanent) {
		t.Errorf("answer to a malformed press id: %v, want ErrPermanent", err)
	}
}

func TestButtonPressInDirectMessage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.startReady()
	h.fake.SendMessage(dmID, "", userID, "Ann", "hi")
	h.Next()
	mid, err := h.ch.Send(h.Ctx(), channels.Outbound{To: to(dmID), Text: "Approve?", Buttons: [][]channels.Button{{{Label: "Yes", Data: "y"}}}})
	if err != nil {
		t.Fatal(err)
	}
	h.fake.PressButton(dmID, mid, userID, "y")
	in := h.Next()
	if in.Press == nil || !in.Direct || in.UserID != userID || in.UserName != "Ann" || in.ChatID != dmID {
		t.Errorf("press in a DM = %+v", in)
	}
}

func TestHandlerPanicDoesNotStopTheChannel(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.Start(func(_ context.Context, in channels.Inbound) error {
		if in.Text == "boom" {
			panic("handler bug")
		}
		h.Inbound <- in
		return nil
	})
	h.WaitReady()
	h.fake.SendMessage(channelID, guildID, userID, "Ann", "boom")
	h.fake.SendMessage(channelID, guildID, userID, "Ann", "after")
	if in := h.Next(); in.Text != "after" {
		t.Errorf("got %+v", in)
	}
	if !strings.Contains(h.Log.String(), "panicked") {
		t.Errorf("panic not logged:\n%s", h.Log)
	}
}

// TestGuildMessagesNeedMention: by default, in servers only messages that
// mention the bot reach the handler; direct messages always do.
func TestGuildMessagesNeedMention(t *testing.T) {
	h := newHarness(t, func(o *discord.Options) { o.AllGuildMessages = false })
	h.startReady()
	h.fake.SendMessage("300", "900", "42", "ann", "chatting among ourselves")
	h.fake.SendMessage("300", "900", "42", "ann", "<@"+discordtest.BotID+"> what's up?")
	in := h.Next()
	if in.Text != "what's up?" || in.Direct {
		t.Fatalf("first delivered event = %+v, want the mention only", in)
	}
	h.fake.SendMessage("", "", "43", "bo", "hello in private")
	if in := h.Next(); in.Text != "hello in private" || !in.Direct {
		t.Fatalf("direct message = %+v", in)
	}
}

// A sticker alone in a direct message is answered: the bot reads text and
// files, not stickers. In a server it is passed over in silence.
func TestStickerWithoutTextInDM(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.startReady()
	id := h.fake.PushMessage(discordtest.Incoming{ChannelID: dmID, UserID: userID, Stickers: 1})
	msgs, err := h.fake.WaitMessages(h.Ctx(), dmID, 1)
	if err != nil {
		t.Fatal(err)
	}
	if msgs[0].Content != "I can only read text messages for now." || msgs[0].ReplyTo != id || !msgs[0].AllowedMentions.NoneAllowed() {
		t.Errorf("reply to a sticker = %+v", msgs[0])
	}
	h.fake.PushMessage(discordtest.Incoming{ChannelID: channelID, GuildID: guildID, UserID: userID, Stickers: 1})
	h.fake.SendMessage(channelID, guildID, userID, "Ann", "text")
	if in := h.Next(); in.Text != "text" {
		t.Errorf("got %+v", in)
	}
	if got := h.fake.Messages(channelID); len(got) != 0 {
		t.Errorf("answered a sticker in a server channel: %+v", got)
	}
}
