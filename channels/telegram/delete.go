package telegram

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-telegram/bot"

	"github.com/switchboard-chat/switchboard/channels"
)

var _ channels.Deleter = (*Channel)(nil)

// Delete removes messageID (deleteMessage). A message that is already gone
// is not an error. A 429 is returned as *channels.RetryAfterError without
// waiting.
func (c *Channel) Delete(ctx context.Context, to channels.Address, messageID string) error {
	chatID, _, err := target(to)
	if err != nil {
		return err
	}
	id, err := strconv.Atoi(messageID)
	if err != nil {
		return fmt.Errorf("telegram: delete in %s: message id %q is not a Telegram message id: %w", to, messageID, channels.ErrPermanent)
	}
	err = c.once(ctx, chatKey(chatID), func(ctx context.Context) error {
		_, err := c.bot.DeleteMessage(ctx, &bot.DeleteMessageParams{ChatID: chatID, MessageID: id})
		return err
	})
	if err == nil || isGone(err) {
		return nil
	}
	return fmt.Errorf("telegram: delete message %s in %s: %w", messageID, to, c.classify(err))
}

// isGone reports whether Telegram says the message to delete does not
// exist (any more).
func isGone(err error) bool {
	return errors.Is(err, bot.ErrorBadRequest) && strings.Contains(err.Error(), "message to delete not found")
}
