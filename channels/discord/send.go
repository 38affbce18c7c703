package discord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/markup"
)

const (
	maxMessage     = 2000 // characters of a message's content
	maxCustomID    = 100  // characters of a button's custom_id
	maxLabel       = 80   // characters of a button's label
	maxRowButtons  = 5    // buttons in one action row
	maxRows        = 5    // action rows on one message
	maxSnowflakeID = 20   // digits of a Discord id
)

// Discord's JSON error codes the channel acts on.
const (
	codeUnknownChannel  = 10003
	codeUnknownMessage  = 10008
	codeUnknownUser     = 10013
	codeUnknownWebhook  = 10015
	codeUnknownInteract = 10062
	codeMissingAccess   = 50001
	codeCannotDM        = 50007
	codeMissingPerms    = 50013
	codeInvalidBody     = 50035
)

// Send renders msg.Text as Discord Markdown and sends it in as many
// messages as it needs: the first replies to msg.ReplyTo (notifying its
// author) and carries msg.File, if any, with the text as its caption (a
// file may go without one); the last carries the buttons. No message can
// mention anyone: allowed_mentions parses nothing and the text disarms
// mentions too. A
// ChatID that is a user id reaches that user's direct messages. It waits
// out short rate limits and returns *channels.RetryAfterError for longer
// ones, and wraps channels.ErrPermanent when retrying cannot help (unknown
// channel, missing access, a file over Options.MaxFileBytes: a
// *channels.FileTooLargeError). It returns the id of the last message sent.
func (c *Channel) Send(ctx context.Context, msg channels.Outbound) (string, error) {
	chatID, err := target(msg.To)
	if err != nil {
		return "", err
	}
	rows, err := components(msg.Buttons)
	if err != nil {
		return "", fmt.Errorf("discord: send to %s: %w", msg.To, err)
	}
	if msg.ReplyTo != "" && !snowflake(msg.ReplyTo) {
		return "", fmt.Errorf("discord: send to %s: reply-to id %q is not a Discord message id: %w",
			msg.To, msg.ReplyTo, channels.ErrPermanent)
	}
	if msg.File != nil {
		if err := c.checkFile(msg.File); err != nil {
			return "", fmt.Errorf("discord: send to %s: %w", msg.To, err)
		}
	}
	parts := markup.DiscordMarkdown(msg.Text, maxMessage)
	switch {
	case len(parts) == 0 && msg.File != nil:
		parts = []string{""} // the file alone
	case len(parts) == 0:
		return "", fmt.Errorf("discord: send to %s: the message has no visible text: %w", msg.To, channels.ErrPermanent)
	}
	var channelID, lastID string
	for i, part := range parts {
		build := func(ch string) *discordgo.MessageSend {
			return partMessage(ch, part, i, len(parts), msg.ReplyTo, rows)
		}
		var m *discordgo.Message
		send := func(ctx context.Context, ch string) error {
			var err error
			if i == 0 && msg.File != nil {
				m, err = c.sendFile(ctx, ch, build(ch), partNonce(msg.Key, i), msg.File)
			} else {
				m, err = c.sendMessage(ctx, ch, build(ch), partNonce(msg.Key, i))
			}
			if err == nil {
				channelID = ch
			}
			return err
		}
		if i == 0 {
			err = c.viaDM(ctx, chatID, send)
		} else {
			err = send(ctx, channelID)
		}
		if err != nil {
			return "", fmt.Errorf("discord: send part %d of %d to %s: %w", i+1, len(parts), msg.To, c.classify(err))
		}
		lastID = m.ID
	}
	return lastID, nil
}

// partMessage is part i of n of a message: the first replies to replyTo
// (when set, notifying its author), the last carries the buttons rows.
func partMessage(channelID, part string, i, n int, replyTo string, rows []discordgo.MessageComponent) *discordgo.MessageSend {
	data := &discordgo.MessageSend{Content: part, AllowedMentions: noMentions(false)}
	if i == 0 && replyTo != "" {
		data.Reference = reference(channelID, replyTo)
		data.AllowedMentions = noMentions(true)
	}
	if i == n-1 {
		data.Components = rows
	}
	return data
}

// sendMessage sends one message, waiting out short rate limits. A
// non-empty nonce is sent with enforce_nonce: if a message with that nonce
// was created in the channel in the last few minutes (a send repeated after
// a crash, or a retry whose first answer was lost), Discord returns it
// instead of posting it again.
func (c *Channel) sendMessage(ctx context.Context, channelID string, data *discordgo.MessageSend, nonce string) (*discordgo.Message, error) {
	var m *discordgo.Message
	err := c.withRetry(ctx, func(ctx context.Context) error {
		var err error
		m, err = c.createMessage(ctx, channelID, data, nonce)
		return err
	})
	return m, err
}

// createMessage makes one message create request, without waiting out a
// 429.
func (c *Channel) createMessage(ctx context.Context, channelID string, data *discordgo.MessageSend, nonce string) (*discordgo.Message, error) {
	// ChannelMessageSendComplex's request (no files are sent), plus the
	// nonce fields discordgo's MessageSend lacks.
	endpoint := discordgo.EndpointChannelMessages(channelID)
	body, err := c.sess.RequestWithBucketID("POST", endpoint, nonceSend{MessageSend: data, Nonce: nonce, EnforceNonce: nonce != ""},
		endpoint, discordgo.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	m := new(discordgo.Message)
	if err := json.Unmarshal(body, m); err != nil {
		return nil, fmt.Errorf("decode the sent message: %w", err)
	}
	return m, nil
}

// nonceSend is a message create request with a nonce.
type nonceSend struct {
	*discordgo.MessageSend
	Nonce        string `json:"nonce,omitempty"`
	EnforceNonce bool   `json:"enforce_nonce,omitempty"`
}

// partNonce is the nonce of part i of a message with key (none without a
// key), at most 25 characters as Discord requires.
func partNonce(key string, i int) string {
	if key == "" {
		return ""
	}
	n := fmt.Sprintf("%s.%d", key, i)
	if len(n) > 25 {
		n = n[len(n)-25:] // the end tells rows and parts apart
	}
	return n
}

// Edit replaces the text and buttons of messageID; nil buttons remove
// them. A text longer than one message is cut after its first part.
func (c *Channel) Edit(ctx context.Context, to channels.Address, messageID string, msg channels.Outbound) error {
	chatID, err := target(to)
	if err != nil {
		return err
	}
	if !snowflake(messageID) {
		return fmt.Errorf("discord: edit in %s: message id %q is not a Discord message id: %w", to, messageID, channels.ErrPermanent)
	}
	rows, err := components(msg.Buttons)
	if err != nil {
		return fmt.Errorf("discord: edit in %s: %w", to, err)
	}
	if rows == nil {
		rows = []discordgo.MessageComponent{} // an empty list removes the buttons
	}
	text, ok := firstPart(msg.Text)
	if !ok {
		return fmt.Errorf("discord: edit in %s: the message has no visible text: %w", to, channels.ErrPermanent)
	}
	err = c.viaDM(ctx, chatID, func(ctx context.Context, ch string) error {
		return c.withRetry(ctx, func(ctx context.Context) error {
			return c.editMessage(ctx, ch, messageID, text, rows)
		})
	})
	if err != nil {
		return fmt.Errorf("discord: edit message %s in %s: %w", messageID, to, c.classify(err))
	}
	return nil
}

// firstPart renders text as Discord Markdown for one message: its first
// part, ending in "…" when more was cut off. It reports false when the
// text has nothing visible.
func firstPart(text string) (string, bool) {
	const more = "\n…"
	parts := markup.DiscordMarkdown(text, maxMessage-utf8.RuneCountInString(more))
	if len(parts) == 0 {
		return "", false
	}
	if len(parts) > 1 {
		return parts[0] + more, true
	}
	return parts[0], true
}

// editMessage makes one message edit request, setting its text and
// buttons (an empty list removes them), without waiting out a 429.
func (c *Channel) editMessage(ctx context.Context, channelID, messageID, text string, rows []discordgo.MessageComponent) error {
	_, err := c.sess.ChannelMessageEditComplex(&discordgo.MessageEdit{
		ID:              messageID,
		Channel:         channelID,
		Content:         &text,
		Components:      &rows,
		AllowedMentions: noMentions(false),
	}, discordgo.WithContext(ctx))
	return err
}

// Typing shows "typing…" in the channel for about ten seconds.
func (c *Channel) Typing(ctx context.Context, to channels.Address) error {
	chatID, err := target(to)
	if err != nil {
		return err
	}
	err = c.viaDM(ctx, chatID, func(ctx context.Context, ch string) error {
		return c.sess.ChannelTyping(ch, discordgo.WithContext(ctx))
	})
	if err != nil {
		return fmt.Errorf("discord: typing in %s: %w", to, c.classify(rateLimited(err)))
	}
	return nil
}

// AnswerPress answers a button press. The press was acknowledged when it
// arrived; a non-empty text is shown to the presser alone, as an ephemeral
// follow-up message.
func (c *Channel) AnswerPress(ctx context.Context, press channels.ButtonPress, text string) error {
	i, ok := decodePress(press.ID)
	if !ok {
		return fmt.Errorf("discord: answer press: %q is not a press id from this channel: %w", redactPressID(press.ID), channels.ErrPermanent)
	}
	if strings.TrimSpace(text) == "" {
		return nil
	}
	parts := markup.DiscordMarkdown(text, maxMessage)
	if len(parts) == 0 {
		return nil
	}
	_, err := c.sess.FollowupMessageCreate(i, true, &discordgo.WebhookParams{
		Content:         parts[0],
		Flags:           discordgo.MessageFlagsEphemeral,
		AllowedMentions: noMentions(false),
	}, discordgo.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("discord: answer press %s: %w", i.ID, c.redact(c.classify(rateLimited(err)), i.Token))
	}
	return nil
}

// redactPressID keeps the interaction id of a malformed press id and hides
// the rest, which may hold a token.
func redactPressID(id string) string {
	head, _, _ := strings.Cut(id, ":")
	return head + ":***"
}

// target returns the channel (or user) id an address names. A thread is a
// channel of its own, so a ThreadID wins over the ChatID.
func target(to channels.Address) (string, error) {
	if to.Platform != "" && to.Platform != Platform {
		return "", fmt.Errorf("discord: address %s is not a discord address: %w", to, channels.ErrPermanent)
	}
	id := to.ChatID
	if to.ThreadID != "" {
		id = to.ThreadID
	}
	if !snowflake(id) {
		return "", fmt.Errorf("discord: %q is not a Discord channel or user id (a number): %w", id, channels.ErrPermanent)
	}
	return id, nil
}

// snowflake reports whether s looks like a Discord id.
func snowflake(s string) bool {
	if s == "" || len(s) > maxSnowflakeID {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// components builds the action rows for rows of buttons, nil for none.
// Rows longer than Discord's five buttons wrap onto the next row.
func components(rows [][]channels.Button) ([]discordgo.MessageComponent, error) {
	var out []discordgo.MessageComponent
	seen := map[string]bool{}
	for _, row := range rows {
		var buttons []discordgo.MessageComponent
		for _, b := range row {
			label := strings.TrimSpace(b.Label)
			if label == "" {
				return nil, fmt.Errorf("button with data %q has no label: %w", b.Data, channels.ErrPermanent)
			}
			if n := utf8.RuneCountInString(b.Data); n == 0 || n > maxCustomID {
				return nil, fmt.Errorf("button %q: data must be 1 to %d characters, is %d: %w",
					b.Label, maxCustomID, n, channels.ErrPermanent)
			}
			if seen[b.Data] {
				return nil, fmt.Errorf("two buttons carry the data %q; Discord needs them distinct: %w", b.Data, channels.ErrPermanent)
			}
			seen[b.Data] = true
			if utf8.RuneCountInString(label) > maxLabel {
				label = string([]rune(label)[:maxLabel-1]) + "…"
			}
			buttons = append(buttons, discordgo.Button{Label: label, Style: discordgo.PrimaryButton, CustomID: b.Data})
		}
		for len(buttons) > 0 {
			n := min(maxRowButtons, len(buttons))
			out = append(out, discordgo.ActionsRow{Components: buttons[:n]})
			buttons = buttons[n:]
		}
	}
	if len(out) > maxRows {
		return nil, fmt.Errorf("%d rows of buttons, Discord allows %d (of %d buttons each): %w",
			len(out), maxRows, maxRowButtons, channels.ErrPermanent)
	}
	return out, nil
}

// noMentions lets a message mention nobody, whatever its text says; a
// reply may still notify the author of the message it answers.
func noMentions(repliedUser bool) *discordgo.MessageAllowedMentions {
	return &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}, RepliedUser: repliedUser}
}

// reference makes a message a reply to messageID, still sent when that
// message is gone.
func reference(channelID, messageID string) *discordgo.MessageReference {
	failIfMissing := false
	return &discordgo.MessageReference{MessageID: messageID, ChannelID: channelID, FailIfNotExists: &failIfMissing}
}

// withRetry calls fn, waiting out 429 answers within MaxRetries,
// MaxRetryWait and ctx's deadline (see channels.RateLimits).
func (c *Channel) withRetry(ctx context.Context, fn func(context.Context) error) error {
	return channels.RateLimits{Platform: "discord", MaxRetries: c.opts.MaxRetries, MaxWait: c.opts.MaxRetryWait,
		Limited: retryAfter, Logger: c.log}.Do(ctx, fn)
}

// rateLimited turns a 429 into a *channels.RetryAfterError without waiting.
func rateLimited(err error) error {
	if after, ok := retryAfter(err); ok {
		return &channels.RetryAfterError{After: after, Err: err}
	}
	return err
}

// retryAfter reports whether err is a 429 and how long Discord asked to
// wait (at least a millisecond; a second when it did not say).
func retryAfter(err error) (time.Duration, bool) {
	var limited *discordgo.RateLimitError
	if errors.As(err, &limited) && limited.RateLimit != nil && limited.TooManyRequests != nil {
		if limited.RetryAfter <= 0 {
			return time.Second, true
		}
		return max(limited.RetryAfter, time.Millisecond), true
	}
	var rest *discordgo.RESTError
	if errors.As(err, &rest) && rest.Response != nil && rest.Response.StatusCode == http.StatusTooManyRequests {
		return time.Second, true
	}
	var cdn *channels.RetryAfterError // an attachment download (channels.Download)
	if errors.As(err, &cdn) {
		return cdn.After, true
	}
	return 0, false
}

// classify redacts err and marks the errors retrying cannot fix with
// channels.ErrPermanent, saying what to do where Discord's code tells.
func (c *Channel) classify(err error) error {
	err = c.redact(err)
	var ra *channels.RetryAfterError
	if errors.As(err, &ra) || errors.Is(err, channels.ErrPermanent) {
		return err // classified already
	}
	var rest *discordgo.RESTError
	if !errors.As(err, &rest) || rest.Response == nil {
		return err
	}
	code := 0
	if rest.Message != nil {
		code = rest.Message.Code
	}
	hint := ""
	switch code {
	case codeUnknownChannel:
		hint = "no channel or user with this id is visible to the bot; check the address"
	case codeUnknownMessage:
		hint = "the message is gone"
	case codeUnknownUser:
		hint = "no user with this id"
	case codeUnknownWebhook, codeUnknownInteract:
		hint = "the button press expired (Discord keeps them 15 minutes)"
	case codeMissingAccess:
		hint = "the bot cannot see this channel; add it to the channel or give it View Channel"
	case codeMissingPerms:
		hint = "the bot lacks permissions here; give it Send Messages, Send Messages in Threads and Read Message History"
	case codeCannotDM:
		hint = "the user does not accept direct messages from the bot (no shared server, or DMs closed)"
	case codeInvalidBody:
		hint = "Discord refused the message as malformed"
	}
	switch status := rest.Response.StatusCode; {
	case status == http.StatusUnauthorized:
		return fmt.Errorf("the bot token was rejected; check discord.token: %w: %w", channels.ErrPermanent, err)
	case status == http.StatusBadRequest || status == http.StatusForbidden || status == http.StatusNotFound:
		if hint != "" {
			return fmt.Errorf("%s: %w: %w", hint, channels.ErrPermanent, err)
		}
		return fmt.Errorf("%w: %w", channels.ErrPermanent, err)
	}
	return err
}
