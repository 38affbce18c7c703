package slack

import (
	"context"
	"errors"
	"fmt"

	"github.com/slack-go/slack"

	"github.com/switchboard-chat/switchboard/channels"
)

var _ channels.Deleter = (*Channel)(nil)

// Delete removes the bot's message with ts messageID (chat.delete). A
// message that is already gone is not an error.
func (c *Channel) Delete(ctx context.Context, to channels.Address, messageID string) error {
	if messageID == "" {
		return fmt.Errorf("slack: delete in %s: no message ts: %w", to, channels.ErrPermanent)
	}
	channel, err := c.target(ctx, to)
	if err != nil {
		return err
	}
	err = c.retry(ctx, func(ctx context.Context) error {
		_, _, err := c.api.DeleteMessageContext(ctx, channel, messageID)
		return err
	})
	var se slack.SlackErrorResponse
	if err == nil || (errors.As(err, &se) && se.Err == "message_not_found") {
		return nil
	}
	return fmt.Errorf("slack: delete message %s in %s: %w", messageID, to, c.classify(err))
}
