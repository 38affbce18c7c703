package telegram

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/markup"
)

var _ channels.LiveAnswerer = (*Channel)(nil)

// liveLimit is the longest Markdown, in runes, a live message takes.
// Messages are split (markup.TelegramHTML) at maxMessage UTF-16 units of
// their HTML, tags and entities included, which is about 1.4 times the
// Markdown of a typical answer with code and links; half the limit leaves
// room for that and for characters outside the Basic Multilingual Plane
// (two units each). A text that overflows all the same shows its first
// part ending in "…" until the final text comes.
const liveLimit = maxMessage / 2

// draftPrefix starts the id of a live answer shown as a draft
// (sendMessageDraft) rather than a message.
const draftPrefix = "draft:"

// liveMark is what a live message shows while its text has nothing
// visible yet, and what a left-over live message that cannot be deleted becomes.
const liveMark = "…"

// LiveLimit implements channels.LiveAnswerer.
func (c *Channel) LiveLimit() int { return liveLimit }

// BeginLive implements channels.LiveAnswerer. In a private chat the answer
// is a draft (sendMessageDraft), which Telegram animates as it grows and the
// final message supersedes; where Telegram refuses drafts, and in groups, it
// is a message (sendMessage) that UpdateLive edits. A 429 is returned as
// *channels.RetryAfterError at once, and the chat's cooldown is recorded so
// that later sends wait it out.
func (c *Channel) BeginLive(ctx context.Context, to channels.Address, replyTo, asker, text string) (string, error) {
	chatID, thread, err := target(to)
	if err != nil {
		return "", err
	}
	reply, err := replyID(to, replyTo)
	if err != nil {
		return "", err
	}
	if c.drafts.usable(chatID) {
		draftID := rand.Int64N(math.MaxInt32) + 1 // non-zero; a new id is a new draft
		err := c.sendDraft(ctx, chatID.(int64), thread, draftID, text)
		if err == nil {
			return draftPrefix + strconv.FormatInt(draftID, 10), nil
		}
		var ra *channels.RetryAfterError
		if errors.As(err, &ra) || ctx.Err() != nil {
			return "", fmt.Errorf("telegram: live answer in %s: %w", to, err)
		}
		c.log.Info("telegram refused a draft; showing the live answer as an edited message instead",
			"chat", to.String(), "error", err)
		c.drafts.refuse(chatID.(int64), err)
	}
	body, mode := liveText(text)
	p := &bot.SendMessageParams{ChatID: chatID, MessageThreadID: thread, Text: body, ParseMode: mode}
	if reply != 0 {
		p.ReplyParameters = &models.ReplyParameters{MessageID: reply, AllowSendingWithoutReply: true}
	}
	m, err := c.sendPart(ctx, p, c.once)
	if err != nil {
		return "", fmt.Errorf("telegram: live answer in %s: %w", to, err)
	}
	return strconv.Itoa(m.ID), nil
}

// UpdateLive implements channels.LiveAnswerer: the draft, or the message
// (editMessageText), shows text. Showing the text it shows already is a
// success. A 429 is returned as *channels.RetryAfterError at once.
func (c *Channel) UpdateLive(ctx context.Context, to channels.Address, id, text string) error {
	chatID, thread, err := target(to)
	if err != nil {
		return err
	}
	if rest, ok := strings.CutPrefix(id, draftPrefix); ok {
		draftID, err := strconv.ParseInt(rest, 10, 64)
		n, private := chatID.(int64)
		if err != nil || draftID == 0 || !private {
			return fmt.Errorf("telegram: live answer %q in %s is not a draft of a private chat: %w", id, to, channels.ErrPermanent)
		}
		if err := c.sendDraft(ctx, n, thread, draftID, text); err != nil {
			return fmt.Errorf("telegram: update live answer in %s: %w", to, err)
		}
		return nil
	}
	msgID, err := strconv.Atoi(id)
	if err != nil {
		return fmt.Errorf("telegram: live answer id %q in %s is not a Telegram message id: %w", id, to, channels.ErrPermanent)
	}
	body, mode := liveText(text)
	p := &bot.EditMessageTextParams{ChatID: chatID, MessageID: msgID, Text: body, ParseMode: mode}
	if err := c.editPart(ctx, p, c.once); err != nil {
		return fmt.Errorf("telegram: update live answer %s in %s: %w", id, to, c.classify(err))
	}
	return nil
}

// sendDraft shows md in draft draftID of a private chat, never waiting out
// a 429.
func (c *Channel) sendDraft(ctx context.Context, chatID int64, thread int, draftID int64, md string) error {
	body, mode := liveText(md)
	send := func(p *bot.SendMessageDraftParams) error {
		return c.once(ctx, chatKey(chatID), func(ctx context.Context) error {
			_, err := c.bot.SendMessageDraft(ctx, p)
			return err
		})
	}
	p := &bot.SendMessageDraftParams{ChatID: chatID, MessageThreadID: thread,
		DraftID: strconv.FormatInt(draftID, 10), Text: body, ParseMode: mode}
	err := send(p)
	if isCantParse(err) {
		c.log.Warn("telegram refused our HTML; showing the draft as plain text", "error", c.redact(err))
		plain := *p
		plain.Text, plain.ParseMode = markup.TelegramText(p.Text), ""
		err = send(&plain)
	}
	if err != nil {
		return c.classify(err)
	}
	return nil
}

// liveText renders Markdown md as one live message shows it: Telegram HTML
// as Send renders it, cut to one message. Markdown with nothing visible yet
// (an empty code block just opened) shows liveMark, so that a partial
// answer never fails the call.
func liveText(md string) (string, models.ParseMode) {
	if part, ok := firstPart(md); ok {
		return part, models.ParseModeHTML
	}
	return liveMark, ""
}
