package slack

import (
	"regexp"
	"strings"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/switchboard-chat/switchboard/channels"
)

// fromEvent maps the message of an Events API callback, if it is one the
// bot should answer.
func (c *Channel) fromEvent(e slackevents.EventsAPIEvent) (channels.Inbound, bool) {
	cb, ok := e.Data.(*slackevents.EventsAPICallbackEvent)
	if !ok {
		return channels.Inbound{}, false
	}
	var in channels.Inbound
	var files []slack.File
	team := cb.TeamID
	switch ev := e.InnerEvent.Data.(type) {
	case *slackevents.MessageEvent:
		in, ok = c.fromMessage(ev)
		if ev.Message != nil {
			files = ev.Message.Files
		}
		team = firstOf(ev.UserTeam, team)
	case *slackevents.AppMentionEvent:
		in, ok = c.fromMention(ev)
		files = ev.Files
		team = firstOf(ev.UserTeam, team)
	default:
		ok = false
	}
	if !ok {
		c.log.Debug("slack event ignored", "event_id", cb.EventID, "type", e.InnerEvent.Type)
		return channels.Inbound{}, false
	}
	if cb.EventID != "" {
		in.ExternalID = cb.EventID
	}
	c.live.wrote(in.ChatID, in.MessageID, author{user: in.UserID, team: firstOf(team, c.whoami().teamID)})
	in.Attachments = c.attachments(files, fileSubtypes(cb.InnerEvent))
	return in, true
}

// userMessage tells which message subtypes are people writing; others
// (edits, deletions, joins, bot posts…) are ignored.
var userMessage = map[string]bool{"": true, "thread_broadcast": true, "file_share": true}

// fromMessage maps a message event. It keeps messages people write in a
// direct conversation with the bot or in a listened-to channel; mentions
// elsewhere arrive as app_mention events. A message of files alone is
// kept too, with no text: fromEvent adds its files.
func (c *Channel) fromMessage(m *slackevents.MessageEvent) (channels.Inbound, bool) {
	bot := c.whoami()
	if !userMessage[m.SubType] || m.BotID != "" || m.User == "" || m.User == bot.userID {
		return channels.Inbound{}, false
	}
	direct := m.ChannelType == slackevents.ChannelTypeIM
	if !direct && !c.listen[m.Channel] {
		return channels.Inbound{}, false
	}
	text := c.cleanText(m.Text, bot.userID)
	if strings.TrimSpace(text) == "" && (m.Message == nil || len(m.Message.Files) == 0) {
		return channels.Inbound{}, false
	}
	return channels.Inbound{
		Platform:   Platform,
		ChatID:     m.Channel,
		ThreadID:   c.thread(m.ThreadTimeStamp, m.TimeStamp, direct),
		UserID:     m.User,
		Text:       text,
		Direct:     direct,
		MessageID:  m.TimeStamp,
		ExternalID: fallbackID(m.ClientMsgID, m.Channel, m.TimeStamp),
	}, true
}

// fromMention maps an app_mention event. Mentions in direct conversations
// and listened-to channels are skipped: their message event carries them.
func (c *Channel) fromMention(m *slackevents.AppMentionEvent) (channels.Inbound, bool) {
	bot := c.whoami()
	if m.BotID != "" || m.User == "" || m.User == bot.userID || m.Edited != nil ||
		strings.HasPrefix(m.Channel, "D") || c.listen[m.Channel] {
		return channels.Inbound{}, false
	}
	text := c.cleanText(m.Text, bot.userID)
	if strings.TrimSpace(text) == "" && len(m.Files) == 0 {
		return channels.Inbound{}, false
	}
	return channels.Inbound{
		Platform:   Platform,
		ChatID:     m.Channel,
		ThreadID:   c.thread(m.ThreadTimeStamp, m.TimeStamp, false),
		UserID:     m.User,
		Text:       text,
		MessageID:  m.TimeStamp,
		ExternalID: fallbackID("", m.Channel, m.TimeStamp),
	}, true
}

// fromPress maps a press on one of our buttons.
func (c *Channel) fromPress(cb slack.InteractionCallback) (channels.Inbound, bool) {
	if cb.Type != slack.InteractionTypeBlockActions || len(cb.ActionCallback.BlockActions) == 0 || cb.User.ID == "" {
		return channels.Inbound{}, false
	}
	act := cb.ActionCallback.BlockActions[0]
	channel := firstOf(cb.Container.ChannelID, cb.Channel.ID)
	messageTS := firstOf(cb.Container.MessageTs, cb.Message.Timestamp)
	thread := firstOf(cb.Container.ThreadTs, cb.Message.ThreadTimestamp)
	if channel == "" || messageTS == "" || act.Value == "" {
		return channels.Inbound{}, false
	}
	trigger := firstOf(cb.TriggerID, act.ActionTs)
	return channels.Inbound{
		Platform:  Platform,
		ChatID:    channel,
		ThreadID:  thread,
		UserID:    cb.User.ID,
		Direct:    strings.HasPrefix(channel, "D"),
		MessageID: messageTS,
		Press: &channels.ButtonPress{
			ID:        pressID{channel: channel, user: cb.User.ID, thread: thread, trigger: trigger}.String(),
			Data:      act.Value,
			MessageID: messageTS,
		},
		ExternalID: "press:" + channel + ":" + messageTS + ":" + cb.User.ID + ":" + trigger,
	}, true
}

// thread picks the thread a message is answered in: its own thread, else
// a new thread under it, except for top-level direct messages unless
// ThreadDirect is set.
func (c *Channel) thread(threadTS, ts string, direct bool) string {
	if threadTS != "" {
		return threadTS
	}
	if direct && !c.opts.ThreadDirect {
		return ""
	}
	return ts
}

// mentionPrefix matches a mention at the start of a message: <@U123> or
// <@U123|name>, with the spaces and punctuation after it.
var mentionPrefix = regexp.MustCompile(`^\s*<@([A-Z0-9]+)(?:\|[^>]*)?>[\s,:]*`)

// textUnescaper undoes Slack's escaping of message text.
var textUnescaper = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&")

// cleanText strips a leading mention of the bot and Slack's escaping.
func (c *Channel) cleanText(text, botUserID string) string {
	if m := mentionPrefix.FindStringSubmatch(text); m != nil && m[1] == botUserID {
		text = text[len(m[0]):]
	}
	return textUnescaper.Replace(text)
}

// fallbackID is id, else a platform-unique id built from the message's
// channel and ts.
func fallbackID(id, channel, ts string) string {
	if id != "" {
		return id
	}
	return "msg:" + channel + ":" + ts
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// pressID is what AnswerPress needs to reach the presser; it travels in
// channels.ButtonPress.ID.
type pressID struct {
	channel, user, thread, trigger string
}

// String encodes the press id as channel:user:thread:trigger.
func (p pressID) String() string {
	return p.channel + ":" + p.user + ":" + p.thread + ":" + p.trigger
}

// parsePressID decodes a press id made by pressID.String.
func parsePressID(s string) (pressID, bool) {
	f := strings.SplitN(s, ":", 4)
	if len(f) != 4 || f[0] == "" || f[1] == "" {
		return pressID{}, false
	}
	return pressID{channel: f[0], user: f[1], thread: f[2], trigger: f[3]}, true
}
