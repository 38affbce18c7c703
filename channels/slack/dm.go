package slack

import (
	"context"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/switchboard-chat/switchboard/channels"
)

// target returns the channel id to post to for an address. A user id (U…
// or W…, as in the daemon's platform:user_id identities) stands for that
// user's direct messages with the bot: the IM is opened with
// conversations.open once and remembered, so that Send and Edit agree on
// the channel.
func (c *Channel) target(ctx context.Context, to channels.Address) (string, error) {
	return c.targetWith(ctx, to, c.retry)
}

// targetWith is target, with retry calling conversations.open: c.retry
// waits out rate limits, callOnce (live answers) does not.
func (c *Channel) targetWith(ctx context.Context, to channels.Address, retry func(context.Context, func(context.Context) error) error) (string, error) {
	if to.Platform != "" && to.Platform != Platform {
		return "", fmt.Errorf("slack: address %s is not a slack address: %w", to, channels.ErrPermanent)
	}
	id := strings.TrimSpace(to.ChatID)
	if id == "" {
		return "", fmt.Errorf("slack: address %s has no channel id: %w", to, channels.ErrPermanent)
	}
	if !isUserID(id) {
		return id, nil
	}
	c.mu.Lock()
	im, ok := c.ims[id]
	c.mu.Unlock()
	if ok {
		return im, nil
	}
	var ch *slack.Channel
	err := retry(ctx, func(ctx context.Context) error {
		var err error
		ch, _, _, err = c.api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{id}})
		return err
	})
	if err != nil {
		return "", fmt.Errorf("slack: open direct messages with %s: %w", id, c.classify(err))
	}
	if ch == nil || ch.ID == "" {
		return "", fmt.Errorf("slack: open direct messages with %s: Slack returned no channel", id)
	}
	c.mu.Lock()
	c.ims[id] = ch.ID
	c.mu.Unlock()
	return ch.ID, nil
}

// isUserID reports whether id names a user (U…, or W… on Enterprise Grid)
// rather than a conversation (C…, G…, D…).
func isUserID(id string) bool {
	return len(id) > 1 && (id[0] == 'U' || id[0] == 'W')
}
