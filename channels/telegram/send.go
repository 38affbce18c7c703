package telegram

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/markup"
)

const (
	maxMessage      = 4096 // Telegram's message limit, in UTF-16 code units
	maxCallbackData = 64   // bytes
	maxPressAnswer  = 200  // characters of an answerCallbackQuery text
)

// Send renders msg.Text as Telegram HTML and sends it in as many messages as
// it needs: the first replies to msg.ReplyTo, the last carries the buttons.
// With msg.File it sends the file instead, msg.Text its caption (see
// sendFile); a file over the Bot API's limit is *channels.FileTooLargeError.
// A part Telegram cannot parse is resent as plain text. It waits out short
// rate limits and returns *channels.RetryAfterError for longer ones, and
// wraps channels.ErrPermanent when retrying cannot help (chat not found,
// bot blocked). It returns the id of the last message sent.
func (c *Channel) Send(ctx context.Context, msg channels.Outbound) (string, error) {
	fs, err := outgoingFor(msg)
	if err != nil {
		return "", err
	}
	if msg.File != nil {
		return c.sendFile(ctx, msg, fs)
	}
	return c.sendText(ctx, msg.To, fs, msg.Text)
}

// outgoingFor is where and how msg's messages go: its chat and topic, what
// the first replies to, the buttons of the last.
func outgoingFor(msg channels.Outbound) (outgoing, error) {
	chatID, thread, err := target(msg.To)
	if err != nil {
		return outgoing{}, err
	}
	keyboard, err := inlineKeyboard(msg.Buttons)
	if err != nil {
		return outgoing{}, fmt.Errorf("telegram: send to %s: %w", msg.To, err)
	}
	replyTo, err := replyID(msg.To, msg.ReplyTo)
	if err != nil {
		return outgoing{}, err
	}
	return outgoing{chatID: chatID, thread: thread, replyTo: replyTo, keyboard: keyboard}, nil
}

// replyID parses the id of the message to reply to; "" is none (0).
func replyID(to channels.Address, replyTo string) (int, error) {
	if replyTo == "" {
		return 0, nil
	}
	id, err := strconv.Atoi(replyTo)
	if err != nil {
		return 0, fmt.Errorf("telegram: send to %s: reply-to id %q is not a Telegram message id: %w",
			to, replyTo, channels.ErrPermanent)
	}
	return id, nil
}

// sendText sends text in as many messages as it needs: the first replies
// to fs.replyTo, the last carries fs.keyboard.
func (c *Channel) sendText(ctx context.Context, to channels.Address, fs outgoing, text string) (string, error) {
	parts, err := textParts(to, text)
	if err != nil {
		return "", err
	}
	lastID := 0
	for i, part := range parts {
		m, err := c.sendPart(ctx, fs.part(i, len(parts), part), c.retry)
		if err != nil {
			return "", fmt.Errorf("telegram: send part %d of %d to %s: %w", i+1, len(parts), to, err)
		}
		lastID = m.ID
	}
	return strconv.Itoa(lastID), nil
}

// textParts renders Markdown text as the Telegram HTML of the messages
// that show it, each within Telegram's limit.
func textParts(to channels.Address, text string) ([]string, error) {
	parts := markup.TelegramHTML(text, maxMessage)
	if len(parts) == 0 {
		return nil, fmt.Errorf("telegram: send to %s: the message has no visible text: %w", to, channels.ErrPermanent)
	}
	return parts, nil
}

// part is the sendMessage call of part i of n: the first replies to
// fs.replyTo, the last carries fs.keyboard.
func (fs outgoing) part(i, n int, text string) *bot.SendMessageParams {
	p := &bot.SendMessageParams{ChatID: fs.chatID, MessageThreadID: fs.thread, Text: text, ParseMode: models.ParseModeHTML}
	if i == 0 && fs.replyTo != 0 {
		p.ReplyParameters = &models.ReplyParameters{MessageID: fs.replyTo, AllowSendingWithoutReply: true}
	}
	if i == n-1 && fs.keyboard != nil {
		p.ReplyMarkup = fs.keyboard
	}
	return p
}

// caller makes a call to chat under its rate limits: retry (waiting out
// short 429s) or once (never waiting).
type caller func(ctx context.Context, chat string, fn func(context.Context) error) error

// sendPart sends one part through call, falling back to plain text when
// Telegram cannot parse the HTML.
func (c *Channel) sendPart(ctx context.Context, p *bot.SendMessageParams, call caller) (*models.Message, error) {
	var m *models.Message
	send := func(p *bot.SendMessageParams) error {
		return call(ctx, chatKey(p.ChatID), func(ctx context.Context) error {
			var err error
			m, err = c.bot.SendMessage(ctx, p)
			return err
		})
	}
	err := send(p)
	if isCantParse(err) {
		c.log.Warn("telegram refused our HTML; sending the part as plain text", "error", c.redact(err))
		plain := *p
		plain.Text, plain.ParseMode = markup.TelegramText(p.Text), ""
		err = send(&plain)
	}
	if err != nil {
		return nil, c.classify(err)
	}
	return m, nil
}

// Edit replaces the text and buttons of messageID; nil buttons remove the
// keyboard. A text longer than one message is cut after its first part.
// Editing to the current content is not an error.
func (c *Channel) Edit(ctx context.Context, to channels.Address, messageID string, msg channels.Outbound) error {
	chatID, _, err := target(to)
	if err != nil {
		return err
	}
	id, err := strconv.Atoi(messageID)
	if err != nil {
		return fmt.Errorf("telegram: edit in %s: message id %q is not a Telegram message id: %w", to, messageID, channels.ErrPermanent)
	}
	keyboard, err := inlineKeyboard(msg.Buttons)
	if err != nil {
		return fmt.Errorf("telegram: edit in %s: %w", to, err)
	}
	if keyboard == nil {
		keyboard = &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{}}
	}
	text, ok := firstPart(msg.Text)
	if !ok {
		return fmt.Errorf("telegram: edit in %s: the message has no visible text: %w", to, channels.ErrPermanent)
	}
	p := &bot.EditMessageTextParams{ChatID: chatID, MessageID: id, Text: text, ParseMode: models.ParseModeHTML, ReplyMarkup: keyboard}
	if err := c.editPart(ctx, p, c.retry); err != nil {
		return fmt.Errorf("telegram: edit message %s in %s: %w", messageID, to, c.classify(err))
	}
	return nil
}

// firstPart renders Markdown md as the Telegram HTML of one message: its
// first part, ending in "…" when more did not fit. It is false when md has
// no visible text.
func firstPart(md string) (string, bool) {
	const more = "\n…"
	parts := markup.TelegramHTML(md, maxMessage-len([]rune(more)))
	if len(parts) == 0 {
		return "", false
	}
	if len(parts) > 1 {
		return parts[0] + more, true
	}
	return parts[0], true
}

// editPart edits a message to p's text through call, falling back to
// plain text when Telegram cannot parse the HTML. An edit to the text the
// message has already is a success. Other errors are returned unclassified.
func (c *Channel) editPart(ctx context.Context, p *bot.EditMessageTextParams, call caller) error {
	edit := func(p *bot.EditMessageTextParams) error {
		return call(ctx, chatKey(p.ChatID), func(ctx context.Context) error {
			_, err := c.bot.EditMessageText(ctx, p)
			return err
		})
	}
	err := edit(p)
	if isCantParse(err) {
		c.log.Warn("telegram refused our HTML; editing with plain text", "error", c.redact(err))
		plain := *p
		plain.Text, plain.ParseMode = markup.TelegramText(p.Text), ""
		err = edit(&plain)
	}
	if isNotModified(err) {
		return nil
	}
	return err
}

// Typing shows "typing…" in the chat (and topic) for a few seconds.
func (c *Channel) Typing(ctx context.Context, to channels.Address) error {
	chatID, thread, err := target(to)
	if err != nil {
		return err
	}
	err = c.once(ctx, chatKey(chatID), func(ctx context.Context) error {
		_, err := c.bot.SendChatAction(ctx, &bot.SendChatActionParams{ChatID: chatID, MessageThreadID: thread, Action: models.ChatActionTyping})
		return err
	})
	if err != nil {
		return fmt.Errorf("telegram: typing in %s: %w", to, c.classify(err))
	}
	return nil
}

// CreateTopic implements channels.TopicCreator: a topic in a forum
// supergroup.
func (c *Channel) CreateTopic(ctx context.Context, chat channels.Address, name string) (channels.Address, error) {
	chatID, _, err := target(chat)
	if err != nil {
		return channels.Address{}, err
	}
	var topic *models.ForumTopic
	err = c.once(ctx, chatKey(chatID), func(ctx context.Context) error {
		topic, err = c.bot.CreateForumTopic(ctx, &bot.CreateForumTopicParams{ChatID: chatID, Name: name})
		return err
	})
	if err != nil {
		return channels.Address{}, fmt.Errorf("telegram: create topic in %s: %w", chat, c.classify(err))
	}
	return channels.Address{Platform: chat.Platform, ChatID: chat.ChatID, ThreadID: strconv.Itoa(topic.MessageThreadID)}, nil
}

// AnswerPress acknowledges a button press, showing text (if any) to the
// presser as a short notification.
func (c *Channel) AnswerPress(ctx context.Context, press channels.ButtonPress, text string) error {
	if press.ID == "" {
		return fmt.Errorf("telegram: answer press: no callback query id: %w", channels.ErrPermanent)
	}
	_, err := c.bot.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{
		CallbackQueryID: press.ID,
		Text:            truncate(text, maxPressAnswer),
	})
	if err != nil {
		return fmt.Errorf("telegram: answer press: %w", c.classify(rateLimited(err)))
	}
	return nil
}

// target parses an address into a chat id (numeric, or @channelname) and a
// topic id.
func target(to channels.Address) (chatID any, thread int, err error) {
	if to.Platform != "" && to.Platform != Platform {
		return nil, 0, fmt.Errorf("telegram: address %s is not a telegram address: %w", to, channels.ErrPermanent)
	}
	if id, err := strconv.ParseInt(to.ChatID, 10, 64); err == nil {
		chatID = id
	} else if strings.HasPrefix(to.ChatID, "@") && len(to.ChatID) > 1 {
		chatID = to.ChatID
	} else {
		return nil, 0, fmt.Errorf("telegram: chat id %q is neither a number nor an @name: %w", to.ChatID, channels.ErrPermanent)
	}
	if to.ThreadID != "" {
		if thread, err = strconv.Atoi(to.ThreadID); err != nil {
			return nil, 0, fmt.Errorf("telegram: topic id %q is not a number: %w", to.ThreadID, channels.ErrPermanent)
		}
	}
	return chatID, thread, nil
}

// inlineKeyboard builds the inline keyboard for rows, nil for none.
func inlineKeyboard(rows [][]channels.Button) (*models.InlineKeyboardMarkup, error) {
	var kb [][]models.InlineKeyboardButton
	for _, row := range rows {
		var out []models.InlineKeyboardButton
		for _, b := range row {
			if strings.TrimSpace(b.Label) == "" {
				return nil, fmt.Errorf("button with data %q has no label: %w", b.Data, channels.ErrPermanent)
			}
			if b.Data == "" || len(b.Data) > maxCallbackData {
				return nil, fmt.Errorf("button %q: data must be 1 to %d bytes, is %d: %w",
					b.Label, maxCallbackData, len(b.Data), channels.ErrPermanent)
			}
			out = append(out, models.InlineKeyboardButton{Text: b.Label, CallbackData: b.Data})
		}
		if len(out) > 0 {
			kb = append(kb, out)
		}
	}
	if kb == nil {
		return nil, nil
	}
	return &models.InlineKeyboardMarkup{InlineKeyboard: kb}, nil
}

// retry calls fn, which sends to chat, waiting out 429 answers within
// MaxRetries, MaxRetryWait and ctx's deadline (see channels.RateLimits).
func (c *Channel) retry(ctx context.Context, chat string, fn func(context.Context) error) error {
	return c.limits(chat, c.opts.MaxRetries).Do(ctx, fn)
}

// once calls fn, which sends to chat, unless the chat is still cooling
// down from a 429; a 429 is returned as *channels.RetryAfterError without
// waiting. For calls whose moment has passed by the time a wait ends
// (typing, deleting a note).
func (c *Channel) once(ctx context.Context, chat string, fn func(context.Context) error) error {
	return c.limits(chat, 0).Do(ctx, fn)
}

// limits are the rate limits of a call to chat: Telegram's flood control
// is per chat, so every call to it shares its cooldown.
func (c *Channel) limits(chat string, retries int) channels.RateLimits {
	return channels.RateLimits{Platform: "telegram", MaxRetries: retries, MaxWait: c.opts.MaxRetryWait,
		Limited: func(err error) (time.Duration, bool) {
			var tooMany *bot.TooManyRequestsError
			var download *channels.RetryAfterError // a file download (channels.Download)
			switch {
			case errors.As(err, &tooMany):
				return retryAfter(tooMany), true
			case errors.As(err, &download):
				return download.After, true
			}
			return 0, false
		}, Logger: c.log, Cooldowns: &c.cooldowns, Chat: chat}
}

// rateLimited turns a 429 into a *channels.RetryAfterError without waiting.
func rateLimited(err error) error {
	var tooMany *bot.TooManyRequestsError
	if errors.As(err, &tooMany) {
		return &channels.RetryAfterError{After: retryAfter(tooMany), Err: err}
	}
	return err
}

// chatKey names a chat for its cooldown: topics of a chat share it.
func chatKey(chatID any) string { return fmt.Sprint(chatID) }

func retryAfter(e *bot.TooManyRequestsError) time.Duration {
	return time.Duration(max(e.RetryAfter, 1)) * time.Second
}

// classify marks errors retrying cannot fix with channels.ErrPermanent.
func (c *Channel) classify(err error) error {
	err = c.redact(err)
	var ra *channels.RetryAfterError
	var migrated *bot.MigrateError
	switch {
	case errors.As(err, &ra):
		return err
	case errors.As(err, &migrated):
		return fmt.Errorf("the group became a supergroup with chat id %d; use that id: %w: %w",
			migrated.MigrateToChatID, channels.ErrPermanent, err)
	case errors.Is(err, bot.ErrorForbidden), errors.Is(err, bot.ErrorBadRequest):
		return fmt.Errorf("%w: %w", channels.ErrPermanent, err)
	}
	return err
}

func isCantParse(err error) bool {
	return errors.Is(err, bot.ErrorBadRequest) && strings.Contains(err.Error(), "can't parse entities")
}

func isNotModified(err error) bool {
	return errors.Is(err, bot.ErrorBadRequest) && strings.Contains(err.Error(), "message is not modified")
}

// truncate cuts s to at most n UTF-16 code units, on a character boundary.
func truncate(s string, n int) string {
	units := 0
	for i, r := range s {
		w := 1
		if r >= 0x10000 {
			w = 2
		}
		if units+w > n {
			return s[:i]
		}
		units += w
	}
	return s
}
