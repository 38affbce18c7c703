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
	chatID, thread, err := target(msg.To)
	if err != nil {
		return "", err
	}
	keyboard, err := inlineKeyboard(msg.Buttons)
	if err != nil {
		return "", fmt.Errorf("telegram: send to %s: %w", msg.To, err)
	}
	replyTo := 0
	if msg.ReplyTo != "" {
		if replyTo, err = strconv.Atoi(msg.ReplyTo); err != nil {
			return "", fmt.Errorf("telegram: send to %s: reply-to id %q is not a Telegram message id: %w",
				msg.To, msg.ReplyTo, channels.ErrPermanent)
		}
	}
	fs := outgoing{chatID: chatID, thread: thread, replyTo: replyTo, keyboard: keyboard}
	if msg.File != nil {
		return c.sendFile(ctx, msg, fs)
	}
	return c.sendText(ctx, msg.To, fs, msg.Text)
}

// sendText sends text in as many messages as it needs: the first replies
// to fs.replyTo, the last carries fs.keyboard.
func (c *Channel) sendText(ctx context.Context, to channels.Address, fs outgoing, text string) (string, error) {
	parts := markup.TelegramHTML(text, maxMessage)
	if len(parts) == 0 {
		return "", fmt.Errorf("telegram: send to %s: the message has no visible text: %w", to, channels.ErrPermanent)
	}
	lastID := 0
	for i, part := range parts {
		p := &bot.SendMessageParams{ChatID: fs.chatID, MessageThreadID: fs.thread, Text: part, ParseMode: models.ParseModeHTML}
		if i == 0 && fs.replyTo != 0 {
			p.ReplyParameters = &models.ReplyParameters{MessageID: fs.replyTo, AllowSendingWithoutReply: true}
		}
		if i == len(parts)-1 && fs.keyboard != nil {
			p.ReplyMarkup = fs.keyboard
		}
		m, err := c.sendPart(ctx, p)
		if err != nil {
			return "", fmt.Errorf("telegram: send part %d of %d to %s: %w", i+1, len(parts), to, err)
		}
		lastID = m.ID
	}
	return strconv.Itoa(lastID), nil
}

// sendPart sends one part, falling back to plain text when Telegram cannot
// parse the HTML.
func (c *Channel) sendPart(ctx context.Context, p *bot.SendMessageParams) (*models.Message, error) {
	var m *models.Message
	send := func(p *bot.SendMessageParams) error {
		return c.retry(ctx, chatKey(p.ChatID), func(ctx context.Context) error {
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
	const more = "\n…"
	parts := markup.TelegramHTML(msg.Text, maxMessage-len([]rune(more)))
	if len(parts) == 0 {
		return fmt.Errorf("telegram: edit in %s: the message has no visible text: %w", to, channels.ErrPermanent)
	}
	text := parts[0]
	if len(parts) > 1 {
		text += more
	}
	edit := func(p *bot.EditMessageTextParams) error {
		return c.retry(ctx, chatKey(p.ChatID), func(ctx context.Context) error {
			_, err := c.bot.EditMessageText(ctx, p)
			return err
		})
	}
	p := &bot.EditMessageTextParams{ChatID: chatID, MessageID: id, Text: text, ParseMode: models.ParseModeHTML, ReplyMarkup: keyboard}
	err = edit(p)
	if isCantParse(err) {
		c.log.Warn("telegram refused our HTML; editing with plain text", "error", c.redact(err))
		plain := *p
		plain.Text, plain.ParseMode = markup.TelegramText(text), ""
		err = edit(&plain)
	}
	if err == nil || isNotModified(err) {
		return nil
	}
	return fmt.Errorf("telegram: edit message %s in %s: %w", messageID, to, c.classify(err))
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
