package discord

import (
	"context"
	"fmt"

	"github.com/bwmarrin/discordgo"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/markup"
)

var _ channels.LiveAnswerer = (*Channel)(nil)

// liveHeadroom is what LiveLimit keeps free of a message: rendering
// escapes Markdown characters and disarms mentions, so the rendered text
// is longer than the Markdown, and a live message should show all of its
// text rather than be cut.
const liveHeadroom = 200

// liveMark is what a live message left over by a shorter final answer is
// edited to when it cannot be deleted.
const liveMark = "…"

// LiveLimit is the longest Markdown text, in runes, one live message
// shows: a Discord message's 2000 characters less room for what
// rendering adds.
func (c *Channel) LiveLimit() int { return maxMessage - liveHeadroom }

// BeginLive posts text, rendered as Send renders it (its first message's
// worth), as a new message replying to replyTo when set, and returns its
// id. It never waits out a rate limit: a 429, or a limit Discord said is
// used up, is a *channels.RetryAfterError at once.
func (c *Channel) BeginLive(ctx context.Context, to channels.Address, replyTo, asker, text string) (string, error) {
	chatID, err := target(to)
	if err != nil {
		return "", err
	}
	if replyTo != "" && !snowflake(replyTo) {
		return "", fmt.Errorf("discord: live answer in %s: reply-to id %q is not a Discord message id: %w",
			to, replyTo, channels.ErrPermanent)
	}
	var m *discordgo.Message
	err = c.viaDM(ctx, chatID, func(ctx context.Context, ch string) error {
		if err := c.liveReady(discordgo.EndpointChannelMessages(ch)); err != nil {
			return err
		}
		var err error
		m, err = c.createMessage(ctx, ch, partMessage(ch, liveText(text), 0, 1, replyTo, nil), "")
		return err
	})
	if err != nil {
		return "", fmt.Errorf("discord: begin live answer in %s: %w", to, c.classify(rateLimited(err)))
	}
	return m.ID, nil
}

// UpdateLive edits live message id to show text. Like BeginLive it never
// waits out a rate limit.
func (c *Channel) UpdateLive(ctx context.Context, to channels.Address, id, text string) error {
	chatID, err := target(to)
	if err != nil {
		return err
	}
	if !snowflake(id) {
		return fmt.Errorf("discord: live answer in %s: message id %q is not a Discord message id: %w", to, id, channels.ErrPermanent)
	}
	shown := liveText(text)
	err = c.viaDM(ctx, chatID, func(ctx context.Context, ch string) error {
		if err := c.liveReady(discordgo.EndpointChannelMessage(ch, "")); err != nil {
			return err
		}
		return c.editMessage(ctx, ch, id, shown, []discordgo.MessageComponent{})
	})
	if err != nil {
		return fmt.Errorf("discord: update live answer %s in %s: %w", id, to, c.classify(rateLimited(err)))
	}
	return nil
}

// liveText renders an answer so far for one message. Text with nothing
// visible yet (a lone "**") shows as an ellipsis rather than failing: a
// live answer is shown however its Markdown is cut.
func liveText(text string) string {
	if shown, ok := firstPart(text); ok {
		return shown
	}
	return liveMark
}

// liveReady returns a *channels.RetryAfterError when discordgo's limiter
// would hold a request on bucket because Discord said its requests are
// used up until a reset: the limiter sleeps, and a live answer must not,
// since bot/stream paces it. A bucket another request holds is left to
// that request, which normally releases it at once.
func (c *Channel) liveReady(bucket string) error {
	limiter := c.sess.Ratelimiter
	b := limiter.GetBucket(bucket)
	if !b.TryLock() {
		return nil
	}
	wait := limiter.GetWaitTime(b, 1)
	b.Unlock()
	if wait <= 0 {
		return nil
	}
	return &channels.RetryAfterError{After: wait, Err: fmt.Errorf("discord's rate limit for %s is used up", bucket)}
}

// FinishLive delivers msg in place of the live messages msg.Replaces, as
// the contract of channels.LiveAnswerer says: msg is split as Send splits
// it, its first parts edited into the live messages in order, the rest
// sent as Send sends them (with msg.Key's nonces, so a repeat does not post
// them twice), and the live messages left over deleted. A live message
// that is gone is replaced by a new one, and so are the parts after it,
// keeping the parts in order. A message with a file is sent anew and the
// live messages deleted. Rate limits are handled as Send handles them. It
// returns the id of the last message.
func (c *Channel) FinishLive(ctx context.Context, msg channels.Outbound) (string, error) {
	for _, id := range msg.Replaces {
		if !snowflake(id) {
			return "", fmt.Errorf("discord: finish live answer in %s: message id %q is not a Discord message id: %w",
				msg.To, id, channels.ErrPermanent)
		}
	}
	if len(msg.Replaces) == 0 || msg.File != nil {
		last, err := c.Send(ctx, msg)
		if err != nil {
			return "", err
		}
		return last, c.dropLive(ctx, msg.To, msg.Replaces)
	}
	chatID, err := target(msg.To)
	if err != nil {
		return "", err
	}
	if msg.ReplyTo != "" && !snowflake(msg.ReplyTo) {
		return "", fmt.Errorf("discord: finish live answer in %s: reply-to id %q is not a Discord message id: %w",
			msg.To, msg.ReplyTo, channels.ErrPermanent)
	}
	rows, err := components(msg.Buttons)
	if err != nil {
		return "", fmt.Errorf("discord: finish live answer in %s: %w", msg.To, err)
	}
	parts := markup.DiscordMarkdown(msg.Text, maxMessage)
	if len(parts) == 0 {
		return "", fmt.Errorf("discord: finish live answer in %s: the message has no visible text: %w", msg.To, channels.ErrPermanent)
	}
	f := finish{c: c, msg: msg, parts: parts, rows: rows}
	for i := range parts {
		if i == 0 {
			err = c.viaDM(ctx, chatID, func(ctx context.Context, ch string) error { return f.part(ctx, ch, 0) })
		} else {
			err = f.part(ctx, f.channelID, i)
		}
		if err != nil {
			return "", fmt.Errorf("discord: finish live answer: part %d of %d in %s: %w", i+1, len(parts), msg.To, c.classify(err))
		}
	}
	return f.lastID, c.dropLive(ctx, msg.To, msg.Replaces[f.edited:])
}

// finish is one FinishLive call's progress through the parts.
type finish struct {
	c         *Channel
	msg       channels.Outbound
	parts     []string
	rows      []discordgo.MessageComponent // the last part's buttons
	channelID string                       // where the parts go, once known
	edited    int                          // live messages made into parts
	sending   bool                         // a live message was gone: the parts from there on are new
	lastID    string
}

// part delivers part i in channel ch: edited into the live message of the
// same place while there is one, else sent.
func (f *finish) part(ctx context.Context, ch string, i int) error {
	last := i == len(f.parts)-1
	if !f.sending && i < len(f.msg.Replaces) {
		rows := []discordgo.MessageComponent{}
		if last && f.rows != nil {
			rows = f.rows
		}
		id := f.msg.Replaces[i]
		err := f.c.withRetry(ctx, func(ctx context.Context) error {
			return f.c.editMessage(ctx, ch, id, f.parts[i], rows)
		})
		switch {
		case err == nil:
			f.channelID, f.lastID, f.edited = ch, id, i+1
			return nil
		case !hasCode(err, codeUnknownMessage):
			return err
		}
		f.c.log.Info("live message is gone; sending the answer's rest anew", "message_id", id, "part", i+1)
		f.sending = true
	}
	m, err := f.c.sendMessage(ctx, ch, partMessage(ch, f.parts[i], i, len(f.parts), f.msg.ReplyTo, f.rows), partNonce(f.msg.Key, i))
	if err != nil {
		return err
	}
	f.channelID, f.lastID = ch, m.ID
	return nil
}

// dropLive deletes live messages a final answer did not use, or where
// deleting fails, edits them to a short mark.
func (c *Channel) dropLive(ctx context.Context, to channels.Address, ids []string) error {
	for _, id := range ids {
		err := c.Delete(ctx, to, id)
		if err == nil {
			continue
		}
		c.log.Warn("cannot delete a left-over live message; marking it", "message_id", id, "error", err)
		if err := c.Edit(ctx, to, id, channels.Outbound{Text: liveMark}); err != nil {
			return fmt.Errorf("discord: finish live answer: left-over message %s: %w", id, err)
		}
	}
	return nil
}
