package telegram

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/switchboard-chat/switchboard/channels"
)

// textOnlyReply answers, in a private chat, a message with neither text
// nor a file switchboard reads (a sticker, a location...).
const textOnlyReply = "I can only read text messages for now."

// dispatch is the library's handler for every update. It queues the update
// on its chat's lane and returns at once, so the updates of one getUpdates
// batch are handled concurrently across chats and in order within a chat.
// A part of an album waits for the album's other parts instead (see
// albums.go); any other update of the chat first hands over the chat's
// albums, so it does not overtake them.
func (c *Channel) dispatch(ctx context.Context, _ *bot.Bot, u *models.Update) {
	if key, ok := albumOf(u); ok {
		c.inflight.park(u.ID)
		c.albums.add(ctx, key, u, func(al *album, handOver bool) { c.queueAlbum(ctx, al, handOver) })
		return
	}
	chat := chatOf(u)
	c.albums.flushChat(chat)
	c.lanes.submit(chat, func() {
		c.handle(ctx, []int64{u.ID}, func(h channels.Handler) error { return c.deliver(ctx, h, u) })
	})
}

// handle hands the updates ids to the handler through deliver, calling it
// again while it fails (see Start). Once Start is stopping it delivers
// nothing more: such updates are not confirmed to Telegram, which sends
// them again.
func (c *Channel) handle(ctx context.Context, ids []int64, deliver func(channels.Handler) error) {
	handled := false
	defer func() {
		for _, id := range ids {
			c.inflight.done(id, handled)
		}
	}()
	defer func() {
		if r := recover(); r != nil {
			handled = true // dropped for good: delivering it again would panic again
			c.log.Error("telegram update handler panicked; update dropped", "update_ids", ids, "panic", r)
		}
	}()
	if ctx.Err() != nil {
		return
	}
	hp := c.handler.Load()
	if hp == nil {
		return
	}
	if err := deliver(*hp); err != nil {
		// Only a stop ends the retries: the update stays unconfirmed.
		c.log.Info("telegram update left unconfirmed; Telegram delivers it again", "update_ids", ids, "error", err)
		return
	}
	handled = true
}

// deliver hands one update, polled or posted to the webhook, to h and
// returns h's error; updates switchboard does not handle return nil.
func (c *Channel) deliver(ctx context.Context, h channels.Handler, u *models.Update) error {
	switch {
	case u.Message != nil:
		return c.onMessage(ctx, h, u.ID, u.Message)
	case u.CallbackQuery != nil:
		return c.onPress(ctx, h, u.ID, u.CallbackQuery)
	}
	c.log.Debug("telegram update ignored", "update_id", u.ID)
	return nil
}

// onMessage delivers a message with text or with files (its caption, if
// any, is the text) and returns the handler's error. A message with
// neither in a private chat gets a polite answer instead; other messages,
// everything from bots and, with Options.RequireMention, group messages
// not meant for the bot are ignored.
func (c *Channel) onMessage(ctx context.Context, h channels.Handler, updateID int64, m *models.Message) error {
	if m.From == nil || m.From.IsBot {
		return nil
	}
	if !c.addressed(m) {
		c.log.Debug("telegram group message not meant for the bot ignored", "update_id", updateID, "chat_id", m.Chat.ID)
		return nil
	}
	in := c.messageInbound(updateID, m)
	if in.Text == "" && len(in.Attachments) == 0 {
		if in.Direct && hasMedia(m) {
			c.replyTextOnly(ctx, m)
		}
		return nil
	}
	return h(ctx, in)
}

// messageInbound is m as an Inbound: its text, or the caption of its
// files, and the files. A caption of media switchboard does not read (an
// animation) tells the model so.
func (c *Channel) messageInbound(updateID int64, m *models.Message) channels.Inbound {
	in := channels.Inbound{
		Platform:    Platform,
		ChatID:      strconv.FormatInt(m.Chat.ID, 10),
		ThreadID:    topic(m),
		UserID:      strconv.FormatInt(m.From.ID, 10),
		UserName:    displayName(m.From),
		Text:        m.Text,
		Direct:      m.Chat.Type == models.ChatTypePrivate,
		MessageID:   strconv.Itoa(m.ID),
		ExternalID:  strconv.FormatInt(updateID, 10),
		Attachments: c.attachments(m),
	}
	switch {
	case in.Text != "":
		in.Text = c.stripMention(in.Text)
	case len(in.Attachments) > 0:
		in.Text = c.stripMention(m.Caption)
	case m.Caption != "":
		in.Text = channels.WithUnreadMedia(c.stripMention(m.Caption), mediaKind(m))
	}
	return in
}

// mediaKind names the media a caption belongs to, for the model.
func mediaKind(m *models.Message) string {
	switch {
	case len(m.Photo) > 0:
		return "a photo"
	case m.Video != nil:
		return "a video"
	case m.Animation != nil:
		return "an animation"
	case m.Voice != nil:
		return "a voice note"
	case m.Audio != nil:
		return "an audio file"
	case m.Document != nil:
		return "a file"
	}
	return "an attachment"
}

// onPress delivers a button press on a message in a chat and returns the
// handler's error. Presses on inline-mode messages carry no chat and are
// ignored.
func (c *Channel) onPress(ctx context.Context, h channels.Handler, updateID int64, q *models.CallbackQuery) error {
	var chat models.Chat
	var messageID int
	var thread string
	switch {
	case q.Message.Message != nil:
		chat, messageID, thread = q.Message.Message.Chat, q.Message.Message.ID, topic(q.Message.Message)
	case q.Message.InaccessibleMessage != nil:
		chat, messageID = q.Message.InaccessibleMessage.Chat, q.Message.InaccessibleMessage.MessageID
	}
	if chat.ID == 0 || q.From.IsBot {
		c.log.Debug("telegram button press without a chat ignored", "update_id", updateID)
		return nil
	}
	mid := strconv.Itoa(messageID)
	return h(ctx, channels.Inbound{
		Platform:   Platform,
		ChatID:     strconv.FormatInt(chat.ID, 10),
		ThreadID:   thread,
		UserID:     strconv.FormatInt(q.From.ID, 10),
		UserName:   displayName(&q.From),
		Direct:     chat.Type == models.ChatTypePrivate,
		MessageID:  mid,
		Press:      &channels.ButtonPress{ID: q.ID, Data: q.Data, MessageID: mid},
		ExternalID: strconv.FormatInt(updateID, 10),
	})
}

// topic returns the forum topic of m, or "" outside forum topics.
func topic(m *models.Message) string {
	if m.IsTopicMessage && m.MessageThreadID != 0 {
		return strconv.Itoa(m.MessageThreadID)
	}
	return ""
}

// displayName is "First Last", else "@username", else the user id.
func displayName(u *models.User) string {
	if name := strings.TrimSpace(u.FirstName + " " + u.LastName); name != "" {
		return name
	}
	if u.Username != "" {
		return "@" + u.Username
	}
	return strconv.FormatInt(u.ID, 10)
}

// hasMedia reports whether m carries content a person sent that is not text.
func hasMedia(m *models.Message) bool {
	return len(m.Photo) > 0 || m.Sticker != nil || m.Document != nil || m.Audio != nil ||
		m.Voice != nil || m.Video != nil || m.VideoNote != nil || m.Animation != nil ||
		m.Contact != nil || m.Location != nil || m.Venue != nil || m.Poll != nil ||
		m.Dice != nil || m.Story != nil || m.PaidMedia != nil || m.Checklist != nil
}

// replyTextOnly tells the sender that only text is understood.
func (c *Channel) replyTextOnly(ctx context.Context, m *models.Message) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	p := &bot.SendMessageParams{
		ChatID:          m.Chat.ID,
		Text:            textOnlyReply,
		ReplyParameters: &models.ReplyParameters{MessageID: m.ID, AllowSendingWithoutReply: true},
	}
	if t := topic(m); t != "" {
		p.MessageThreadID = m.MessageThreadID
	}
	err := c.retry(ctx, chatKey(p.ChatID), func(ctx context.Context) error {
		_, err := c.bot.SendMessage(ctx, p)
		return err
	})
	if err != nil {
		c.log.Warn("telegram could not answer a non-text message", "chat_id", m.Chat.ID, "error", c.redact(err))
	}
}
