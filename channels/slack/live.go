package slack

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/switchboard-chat/switchboard/channels"
)

// maxStreamed bounds the Markdown one stream keeps (and the adapter
// remembers of it); past it the message is edited instead. Slack takes
// 12 000 characters per call; the daemon's live messages stay near
// LiveLimit, far below.
const maxStreamed = 12000

// workspaceRefusals are chat.startStream errors that say this workspace
// or token cannot stream at all: the adapter stops asking and posts and
// edits live answers instead.
var workspaceRefusals = map[string]bool{
	"unknown_method":           true,
	"method_deprecated":        true,
	"deprecated_endpoint":      true,
	"not_allowed_token_type":   true,
	"missing_scope":            true,
	"is_bot":                   true,
	"enterprise_is_restricted": true,
}

// answerRefusals are chat.startStream errors that say this conversation
// cannot take a stream (or not with what we know): that answer is posted
// and edited, and the next one still tries to stream.
var answerRefusals = map[string]bool{
	"invalid_arguments":                        true,
	"channel_type_not_supported":               true,
	"missing_recipient_user_id":                true,
	"missing_recipient_team_id":                true,
	"user_not_found":                           true,
	"restricted_action_non_threadable_channel": true,
	"messages_tab_disabled":                    true,
}

// LiveLimit is the Markdown, in runes, one live message shows: what Send
// puts in one message.
func (c *Channel) LiveLimit() int { return maxText }

// BeginLive starts a live answer in to's thread: a Slack stream
// (chat.startStream with text as markdown_text; in a channel for the
// person who wrote replyTo, or the thread, as this replica saw them, else
// for asker) where the workspace has
// streaming, else a message posted as Send renders it and later edited.
// A top-level answer (no thread) is always posted: Slack streams only in
// threads. It returns the message ts. A 429 is returned at once as a
// *channels.RetryAfterError.
func (c *Channel) BeginLive(ctx context.Context, to channels.Address, replyTo, asker, text string) (string, error) {
	channel, err := c.targetWith(ctx, to, callOnce)
	if err != nil {
		return "", retryAfter(err, c.redact)
	}
	ts, started, err := c.startStream(ctx, channel, to, replyTo, asker, text)
	if started || err != nil {
		return ts, err
	}
	body, ok := oneMessage(text)
	if !ok {
		return "", fmt.Errorf("slack: live answer in %s: the text has no visible part: %w", to, channels.ErrPermanent)
	}
	opts := []slack.MsgOption{slack.MsgOptionText(body, false), slack.MsgOptionBlocks(section(body))}
	if to.ThreadID != "" {
		opts = append(opts, slack.MsgOptionTS(to.ThreadID))
	}
	_, ts, err = c.api.PostMessageContext(ctx, channel, opts...)
	if err != nil {
		return "", fmt.Errorf("slack: post a live answer in %s: %w", to, c.liveErr(err))
	}
	c.live.set(ts, liveMsg{})
	return ts, nil
}

// startStream tries chat.startStream; started is false (with no error)
// when the answer is to be posted instead.
func (c *Channel) startStream(ctx context.Context, channel string, to channels.Address, replyTo, asker, text string) (ts string, started bool, err error) {
	if to.ThreadID == "" || c.live.refusal() != "" {
		return "", false, nil
	}
	shown := streamable(text)
	if len(shown) > maxStreamed {
		return "", false, nil
	}
	opts := []slack.MsgOption{slack.MsgOptionTS(to.ThreadID)}
	if shown != "" {
		opts = append(opts, slack.MsgOptionMarkdownText(streamEscaper.Replace(shown)))
	}
	if !strings.HasPrefix(channel, "D") {
		// Outside direct messages Slack streams to one person: the one
		// asking, with their team as this replica saw their message, else
		// the workspace's own. Unknown → post.
		a, ok := c.live.author(channel, replyTo, to.ThreadID)
		if !ok && asker != "" {
			a, ok = author{user: asker, team: c.whoami().teamID}, c.whoami().teamID != ""
		}
		if !ok {
			c.log.Debug("slack live answer posted, not streamed: who asked is unknown", "to", to.String())
			return "", false, nil
		}
		opts = append(opts, slack.MsgOptionRecipientUserID(a.user), slack.MsgOptionRecipientTeamID(a.team))
	}
	_, ts, err = c.api.StartStreamContext(ctx, channel, opts...)
	code := slackCode(err)
	switch {
	case err == nil:
		c.live.set(ts, liveMsg{stream: true, shown: shown})
		return ts, true, nil
	case workspaceRefusals[code]:
		if c.live.refuse(code) {
			c.log.Info("slack streaming unavailable; live answers are posted and edited instead", "error", code)
		}
		return "", false, nil
	case answerRefusals[code]:
		c.log.Debug("slack live answer posted, not streamed", "to", to.String(), "error", code)
		return "", false, nil
	}
	return "", false, fmt.Errorf("slack: start a live answer in %s: %w", to, c.liveErr(err))
}

// UpdateLive shows text, the whole answer so far, in live message id. A
// stream gets what text adds to what it shows (chat.appendStream); a text
// that does not go on from it (the model started again) stops the stream,
// and from then on the message is edited (chat.update) as Edit renders
// it. A 429 is returned at once as a *channels.RetryAfterError.
func (c *Channel) UpdateLive(ctx context.Context, to channels.Address, id, text string) error {
	if id == "" {
		return fmt.Errorf("slack: live update in %s: no message ts: %w", to, channels.ErrPermanent)
	}
	channel, err := c.targetWith(ctx, to, callOnce)
	if err != nil {
		return retryAfter(err, c.redact)
	}
	if m, ok := c.live.get(id); ok && m.stream {
		done, err := c.appendLive(ctx, channel, id, m, text)
		if done || err != nil {
			if err != nil {
				err = fmt.Errorf("slack: live update of %s in %s: %w", id, to, err)
			}
			return err
		}
	}
	body, ok := oneMessage(text)
	if !ok {
		return nil // nothing to show yet; the message keeps its text
	}
	_, _, _, err = c.api.UpdateMessageContext(ctx, channel, id,
		slack.MsgOptionText(body, false), slack.MsgOptionBlocks(section(body)))
	if err != nil {
		return fmt.Errorf("slack: live update of %s in %s: %w", id, to, c.liveErr(err))
	}
	return nil
}

// appendLive appends to stream id what text adds to it; done is false
// when the stream has ended (stopped here, or by Slack) and the message
// is to be edited instead.
func (c *Channel) appendLive(ctx context.Context, channel, id string, m liveMsg, text string) (done bool, err error) {
	shown := streamable(text)
	if strings.HasPrefix(shown, m.shown) && len(shown) <= maxStreamed {
		add := shown[len(m.shown):]
		if add == "" {
			return true, nil
		}
		_, _, err := c.api.AppendStreamContext(ctx, channel, id, slack.MsgOptionMarkdownText(streamEscaper.Replace(add)))
		switch {
		case err == nil:
			c.live.set(id, liveMsg{stream: true, shown: shown})
			return true, nil
		case slackCode(err) != "message_not_in_streaming_state":
			return false, c.liveErr(err)
		}
		// Slack ended the stream (they time out): edit from now on.
	} else if err := c.stopLive(ctx, channel, id, callOnce); err != nil {
		return false, c.liveErr(err)
	}
	c.live.set(id, liveMsg{})
	return false, nil
}

// stopLive stops stream id (chat.stopStream) through retry; a message
// that no longer streams, or a workspace without the method, is no error.
func (c *Channel) stopLive(ctx context.Context, channel, id string, retry func(context.Context, func(context.Context) error) error) error {
	err := retry(ctx, func(ctx context.Context) error {
		_, _, err := c.api.StopStreamContext(ctx, channel, id)
		return err
	})
	switch code := slackCode(err); {
	case err == nil, code == "message_not_in_streaming_state", workspaceRefusals[code]:
		return nil
	}
	return err
}

// callOnce calls fn once: live updates hand a 429 to the daemon, which
// skips updates until it may send again.
func callOnce(ctx context.Context, fn func(context.Context) error) error { return fn(ctx) }

// liveErr classifies err as classify does, a 429 being a
// *channels.RetryAfterError with Slack's Retry-After.
func (c *Channel) liveErr(err error) error {
	if _, ok := rateLimited(err); ok {
		return retryAfter(err, c.redact)
	}
	return c.classify(err)
}

// retryAfter turns a 429 in err (classified already or not) into a
// *channels.RetryAfterError, cleaned by redact; any other err is returned
// as it is.
func retryAfter(err error, redact func(error) error) error {
	var ra *channels.RetryAfterError
	if errors.As(err, &ra) {
		return err
	}
	if after, ok := rateLimited(err); ok {
		return &channels.RetryAfterError{After: after, Err: redact(err)}
	}
	return err
}

// slackCode is the error code of a Slack {"ok":false} answer, "" for any
// other error.
func slackCode(err error) string {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		return se.Err
	}
	return ""
}
