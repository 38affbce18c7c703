package slack

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/markup"
)

const (
	maxText        = 3000 // a section block's text, and what we keep a message's text to
	maxBlocks      = 50   // blocks in one message
	maxRowButtons  = 25   // elements in one actions block
	maxButtonLabel = 75   // characters of a button's plain_text label
	maxButtonValue = 2000 // bytes of a button's value
)

// Send renders msg.Text as mrkdwn and posts it in as many messages as it
// needs, each a verbatim section block (at most 3000 characters) with the
// same text as notification fallback, in the thread msg.To.ThreadID names
// (top level when it is empty). The last message carries the buttons as
// actions blocks. A user id (U…, W…) as chat id means that user's direct
// messages, opened with conversations.open. msg.ReplyTo is not used: on
// Slack the thread carries the context.
//
// It waits out short rate limits and returns *channels.RetryAfterError for
// longer ones, and wraps channels.ErrPermanent when retrying cannot help
// (channel not found, bot not in channel, archived, token rejected). It
// returns the ts of the last message sent.
//
// With msg.File set it uploads the file instead (see sendFile), msg.Text
// being its caption.
func (c *Channel) Send(ctx context.Context, msg channels.Outbound) (string, error) {
	if msg.File != nil {
		return c.sendFile(ctx, msg)
	}
	actions, err := actionBlocks(msg.Buttons)
	if err != nil {
		return "", fmt.Errorf("slack: send to %s: %w", msg.To, err)
	}
	channel, err := c.target(ctx, msg.To)
	if err != nil {
		return "", err
	}
	parts := markup.SlackMrkdwn(msg.Text, maxText)
	if len(parts) == 0 {
		return "", fmt.Errorf("slack: send to %s: the message has no visible text: %w", msg.To, channels.ErrPermanent)
	}
	return c.postParts(ctx, channel, msg.To, parts, actions)
}

// postParts posts each rendered part as one message in channel (and
// to's thread), the actions under the last, and returns the last ts.
func (c *Channel) postParts(ctx context.Context, channel string, to channels.Address, parts []string, actions []slack.Block) (string, error) {
	var last string
	for i, part := range parts {
		blocks := []slack.Block{section(part)}
		if i == len(parts)-1 {
			blocks = append(blocks, actions...)
		}
		var err error
		if last, err = c.postPart(ctx, channel, to, part, blocks); err != nil {
			return "", fmt.Errorf("slack: send part %d of %d to %s: %w", i+1, len(parts), to, err)
		}
	}
	return last, nil
}

// Edit replaces the text and buttons of the message with ts messageID;
// nil buttons remove them. A text longer than one message is cut after its
// first part.
func (c *Channel) Edit(ctx context.Context, to channels.Address, messageID string, msg channels.Outbound) error {
	if messageID == "" {
		return fmt.Errorf("slack: edit in %s: no message ts: %w", to, channels.ErrPermanent)
	}
	actions, err := actionBlocks(msg.Buttons)
	if err != nil {
		return fmt.Errorf("slack: edit in %s: %w", to, err)
	}
	channel, err := c.target(ctx, to)
	if err != nil {
		return err
	}
	text, ok := oneMessage(msg.Text)
	if !ok {
		return fmt.Errorf("slack: edit in %s: the message has no visible text: %w", to, channels.ErrPermanent)
	}
	blocks := append([]slack.Block{section(text)}, actions...)
	err = c.retry(ctx, func(ctx context.Context) error {
		_, _, _, err := c.api.UpdateMessageContext(ctx, channel, messageID,
			slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...))
		return err
	})
	if err != nil {
		return fmt.Errorf("slack: edit message %s in %s: %w", messageID, to, c.classify(err))
	}
	return nil
}

// oneMessage renders md as mrkdwn for one message: its first part, ending
// in "…" when more was cut. ok is false when md has no visible text.
func oneMessage(md string) (text string, ok bool) {
	const more = "\n…"
	parts := markup.SlackMrkdwn(md, maxText-utf8.RuneCountInString(more))
	if len(parts) == 0 {
		return "", false
	}
	text = parts[0]
	if len(parts) > 1 {
		text += more
	}
	return text, true
}

// Typing does nothing: Slack has no typing indicator for bots (the
// assistant.threads.setStatus status exists only in Slack's AI-assistant
// threads), and posting a "working…" note on every call would flood the
// thread. It returns nil so callers need not care.
func (c *Channel) Typing(context.Context, channels.Address) error { return nil }

// AnswerPress shows text (if any) to the presser alone, as an ephemeral
// message in the channel (and thread) of the button. The press itself was
// acknowledged when it arrived.
func (c *Channel) AnswerPress(ctx context.Context, press channels.ButtonPress, text string) error {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	p, ok := parsePressID(press.ID)
	if !ok {
		return fmt.Errorf("slack: answer press: %q is not a press id from this channel: %w", press.ID, channels.ErrPermanent)
	}
	parts := markup.SlackMrkdwn(text, maxText)
	if len(parts) == 0 {
		return nil
	}
	opts := []slack.MsgOption{slack.MsgOptionText(parts[0], false), slack.MsgOptionBlocks(section(parts[0]))}
	if p.thread != "" {
		opts = append(opts, slack.MsgOptionTS(p.thread))
	}
	err := c.retry(ctx, func(ctx context.Context) error {
		_, err := c.api.PostEphemeralContext(ctx, p.channel, p.user, opts...)
		return err
	})
	if err != nil {
		return fmt.Errorf("slack: answer press: %w", c.classify(err))
	}
	return nil
}

// section is a section block showing mrkdwn verbatim: Slack links, names
// and mentions nothing by itself.
func section(text string) slack.Block {
	return slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, text, false, true), nil, nil)
}

// actionBlocks turns rows of buttons into actions blocks (a row of more
// than 25 buttons takes several); nil for none.
func actionBlocks(rows [][]channels.Button) ([]slack.Block, error) {
	var blocks []slack.Block
	n := 0
	for _, row := range rows {
		var elems []slack.BlockElement
		for _, b := range row {
			label := strings.TrimSpace(b.Label)
			if label == "" {
				return nil, fmt.Errorf("button with data %q has no label: %w", b.Data, channels.ErrPermanent)
			}
			if b.Data == "" || len(b.Data) > maxButtonValue {
				return nil, fmt.Errorf("button %q: data must be 1 to %d bytes, is %d: %w",
					b.Label, maxButtonValue, len(b.Data), channels.ErrPermanent)
			}
			n++
			btn := slack.NewButtonBlockElement(fmt.Sprintf("sb_%d", n), b.Data,
				slack.NewTextBlockObject(slack.PlainTextType, truncate(label, maxButtonLabel), true, false))
			elems = append(elems, btn)
			if len(elems) == maxRowButtons {
				blocks = append(blocks, slack.NewActionBlock("", elems...))
				elems = nil
			}
		}
		if len(elems) > 0 {
			blocks = append(blocks, slack.NewActionBlock("", elems...))
		}
	}
	if len(blocks) > maxBlocks-1 {
		return nil, fmt.Errorf("%d rows of buttons do not fit in one Slack message (at most %d): %w",
			len(blocks), maxBlocks-1, channels.ErrPermanent)
	}
	return blocks, nil
}

// truncate cuts s to at most n characters, ending with "…" when cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
