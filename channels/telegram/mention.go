package telegram

import (
	"regexp"
	"strings"
	"unicode/utf16"

	"github.com/go-telegram/bot/models"
)

// identity is the bot's own account, as getMe returned it: group messages
// are addressed to it by its username or its user id.
type identity struct {
	id       int64
	username string
}

// addressed reports whether a message is for the bot. In private chats,
// or when Options.RequireMention is off, every message is; in groups a
// message is when it mentions the bot (@username, or a text mention of
// its account), replies to one of its messages, or is a command that names
// no other bot (/cmd or /cmd@thisbot; /cmd@otherbot is that bot's).
func (c *Channel) addressed(m *models.Message) bool {
	if !c.opts.RequireMention || m.Chat.Type == models.ChatTypePrivate {
		return true
	}
	me := c.me.Load()
	if me == nil {
		return false // not connected yet: nothing can be recognised as ours
	}
	if r := m.ReplyToMessage; r != nil && r.From != nil && r.From.ID == me.id && r.ForumTopicCreated == nil {
		// In a forum topic every message "replies" to the topic's creation;
		// only a reply to a real message of the bot counts.
		return true
	}
	text, entities := m.Text, m.Entities
	if text == "" {
		text, entities = m.Caption, m.CaptionEntities
	}
	if target, ok := commandTarget(text); ok {
		return target == "" || strings.EqualFold(target, me.username)
	}
	for _, e := range entities {
		switch e.Type {
		case models.MessageEntityTypeMention:
			if strings.EqualFold(entityText(text, e), "@"+me.username) {
				return true
			}
		case models.MessageEntityTypeTextMention:
			if e.User != nil && e.User.ID == me.id {
				return true
			}
		}
	}
	return false
}

// leadingCommand matches a command as Telegram reads one: a leading
// /word, perhaps naming a bot (/help@some_bot), then the end or a space;
// "/usr/bin" is not one.
var leadingCommand = regexp.MustCompile(`^/[A-Za-z0-9_]{1,32}(?:@([A-Za-z0-9_]+))?(?:\s|$)`)

// commandTarget returns, for a text that is a command, the bot it names
// ("" for a bare /cmd); ok is false when text is not a command.
func commandTarget(text string) (target string, ok bool) {
	m := leadingCommand.FindStringSubmatch(text)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// entityText is the part of text entity e covers; Telegram counts offsets
// in UTF-16 code units.
func entityText(text string, e models.MessageEntity) string {
	units := utf16.Encode([]rune(text))
	if e.Offset < 0 || e.Length < 0 || e.Offset+e.Length > len(units) {
		return ""
	}
	return string(utf16.Decode(units[e.Offset : e.Offset+e.Length]))
}

// leadingMention matches an @username at the start of a message, with
// the separators after it ("@bot, do this").
var leadingMention = regexp.MustCompile(`^\s*@([A-Za-z0-9_]+)[\s,:]*`)

// stripMention removes a leading mention of the bot, as the Slack and
// Discord adapters do: the model sees what was asked, not the bot's name.
func (c *Channel) stripMention(text string) string {
	me := c.me.Load()
	if me == nil {
		return text
	}
	m := leadingMention.FindStringSubmatch(text)
	if m == nil || !strings.EqualFold(m[1], me.username) {
		return text
	}
	return text[len(m[0]):]
}
