package slack

import (
	"context"
	"errors"
	"fmt"

	"github.com/slack-go/slack"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/markup"
)

// leftOverMark is what a left-over live message that cannot be deleted is
// edited to.
const leftOverMark = "…"

// FinishLive delivers msg in place of its live messages msg.Replaces:
// rendered and split as Send does, each stream stopped (chat.stopStream)
// and its message edited to its part (chat.update, the buttons under the
// last part), the parts beyond the live messages posted in to's thread,
// and live messages left over deleted. A live message that is gone gets
// its part posted anew. It returns the ts of the last part.
//
// Called again for the same answer (the dispatcher retries after a
// failure midway) it edits the messages the first call left, posted ones
// included, so nothing shows twice. Rate limits are waited out as Send
// waits them out.
func (c *Channel) FinishLive(ctx context.Context, msg channels.Outbound) (string, error) {
	if len(msg.Replaces) == 0 {
		return c.Send(ctx, msg)
	}
	channel, err := c.target(ctx, msg.To)
	if err != nil {
		return "", err
	}
	if msg.File != nil {
		return c.finishWithFile(ctx, channel, msg)
	}
	actions, err := actionBlocks(msg.Buttons)
	if err != nil {
		return "", fmt.Errorf("slack: finish live answer in %s: %w", msg.To, err)
	}
	parts := markup.SlackMrkdwn(msg.Text, maxText)
	if len(parts) == 0 {
		return "", fmt.Errorf("slack: finish live answer in %s: the message has no visible text: %w", msg.To, channels.ErrPermanent)
	}
	key := channel + " " + msg.Replaces[0]
	ids := c.live.holders(key)
	if ids == nil {
		ids = append([]string(nil), msg.Replaces...)
	}
	var last string
	for i, part := range parts {
		blocks := []slack.Block{section(part)}
		if i == len(parts)-1 {
			blocks = append(blocks, actions...)
		}
		if i < len(ids) {
			last, err = c.finishPart(ctx, channel, msg.To, ids[i], part, blocks)
		} else {
			last, err = c.postPart(ctx, channel, msg.To, part, blocks)
		}
		if err != nil {
			return "", fmt.Errorf("slack: finish live answer, part %d of %d in %s: %w", i+1, len(parts), msg.To, err)
		}
		if i < len(ids) {
			ids[i] = last
		} else {
			ids = append(ids, last)
		}
		c.live.hold(key, ids)
	}
	for _, id := range ids[len(parts):] {
		if err := c.removeLive(ctx, channel, msg.To, id); err != nil {
			return "", err
		}
	}
	c.live.hold(key, ids[:len(parts)])
	for _, id := range msg.Replaces {
		c.live.drop(id)
	}
	return last, nil
}

// finishPart stops live message id's stream and edits part into it,
// returning its ts; a message that is gone gets part posted anew, and the
// new ts.
func (c *Channel) finishPart(ctx context.Context, channel string, to channels.Address, id, part string, blocks []slack.Block) (string, error) {
	if err := c.stopIfStreaming(ctx, channel, id); err != nil {
		return "", err
	}
	err := c.retry(ctx, func(ctx context.Context) error {
		_, _, _, err := c.api.UpdateMessageContext(ctx, channel, id, slack.MsgOptionText(part, false), slack.MsgOptionBlocks(blocks...))
		return err
	})
	switch {
	case err == nil:
		c.live.set(id, liveMsg{})
		return id, nil
	case slackCode(err) == "message_not_found":
		c.log.Info("slack live message gone; its part of the answer is posted anew", "to", to.String(), "ts", id)
		c.live.drop(id)
		return c.postPart(ctx, channel, to, part, blocks)
	}
	return "", fmt.Errorf("edit live message %s: %w", id, c.classify(err))
}

// stopIfStreaming stops live message id's stream unless it is known not
// to stream, or the workspace has no streams.
func (c *Channel) stopIfStreaming(ctx context.Context, channel, id string) error {
	m, known := c.live.get(id)
	if (known && !m.stream) || (!known && c.live.refusal() != "") {
		return nil
	}
	err := c.stopLive(ctx, channel, id, c.retry)
	if err == nil || slackCode(err) == "message_not_found" {
		// Gone: the edit that follows finds out, and posts anew.
		return nil
	}
	return fmt.Errorf("stop stream %s: %w", id, c.classify(err))
}

// postPart posts one rendered part with its blocks in channel (and to's
// thread), waiting out short rate limits, and returns its ts.
func (c *Channel) postPart(ctx context.Context, channel string, to channels.Address, part string, blocks []slack.Block) (string, error) {
	opts := []slack.MsgOption{slack.MsgOptionText(part, false), slack.MsgOptionBlocks(blocks...)}
	if to.ThreadID != "" {
		opts = append(opts, slack.MsgOptionTS(to.ThreadID))
	}
	var ts string
	err := c.retry(ctx, func(ctx context.Context) error {
		var err error
		_, ts, err = c.api.PostMessageContext(ctx, channel, opts...)
		return err
	})
	if err != nil {
		return "", c.classify(err)
	}
	return ts, nil
}

// removeLive deletes a left-over live message, stopping its stream
// first; one the bot may not delete is edited to a short mark.
func (c *Channel) removeLive(ctx context.Context, channel string, to channels.Address, id string) error {
	if err := c.stopIfStreaming(ctx, channel, id); err != nil {
		return fmt.Errorf("slack: finish live answer in %s: %w", to, err)
	}
	c.live.drop(id)
	err := c.Delete(ctx, to, id)
	if err == nil || !errors.Is(err, channels.ErrPermanent) {
		return err
	}
	if eerr := c.Edit(ctx, to, id, channels.Outbound{Text: leftOverMark}); eerr != nil {
		return fmt.Errorf("%w; marking it left over: %w", err, eerr)
	}
	return nil
}

// finishWithFile removes the live messages and sends msg's file with its
// caption in their place, once however often it is called.
func (c *Channel) finishWithFile(ctx context.Context, channel string, msg channels.Outbound) (string, error) {
	key := channel + " " + msg.Replaces[0] + " file"
	for _, id := range msg.Replaces {
		if err := c.removeLive(ctx, channel, msg.To, id); err != nil {
			return "", err
		}
	}
	if sent := c.live.holders(key); len(sent) == 1 {
		return sent[0], nil
	}
	out := msg
	out.Replaces = nil
	id, err := c.Send(ctx, out)
	if err != nil {
		return "", err
	}
	c.live.hold(key, []string{id})
	return id, nil
}
