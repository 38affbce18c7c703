package discord

import (
	"context"
	"errors"
	"fmt"

	"github.com/bwmarrin/discordgo"

	"github.com/switchboard-chat/switchboard/channels"
)

var _ channels.Deleter = (*Channel)(nil)

// Delete removes the bot's message messageID. A message that is already
// gone is not an error.
func (c *Channel) Delete(ctx context.Context, to channels.Address, messageID string) error {
	chatID, err := target(to)
	if err != nil {
		return err
	}
	if !snowflake(messageID) {
		return fmt.Errorf("discord: delete in %s: message id %q is not a Discord message id: %w", to, messageID, channels.ErrPermanent)
	}
	err = c.viaDM(ctx, chatID, func(ctx context.Context, ch string) error {
		return c.withRetry(ctx, func(ctx context.Context) error {
			return c.sess.ChannelMessageDelete(ch, messageID, discordgo.WithContext(ctx))
		})
	})
	var rest *discordgo.RESTError
	if err == nil || (errors.As(err, &rest) && rest.Message != nil && rest.Message.Code == discordgo.ErrCodeUnknownMessage) {
		return nil
	}
	return fmt.Errorf("discord: delete message %s in %s: %w", messageID, to, c.classify(err))
}
