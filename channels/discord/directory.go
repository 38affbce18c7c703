package discord

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/bwmarrin/discordgo"
)

// maxDirectory bounds the user caches; past it they start over, and
// addresses resolve through Discord again.
const maxDirectory = 10000

// directory maps user ids to their direct-message channels. Discord ids
// are all snowflakes, so an address cannot say whether its ChatID is a
// channel or a user; the directory remembers the users the bot has seen
// (authors and pressers) and the DM channels it knows.
type directory struct {
	mu    sync.Mutex
	dm    map[string]string   // user id → DM channel id
	users map[string]struct{} // user ids seen
}

func newDirectory() *directory {
	return &directory{dm: map[string]string{}, users: map[string]struct{}{}}
}

// remember records channelID as userID's DM channel.
func (d *directory) remember(userID, channelID string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.dm) >= maxDirectory {
		clear(d.dm)
	}
	d.dm[userID] = channelID
	d.seenLocked(userID)
}

// seen records userID as a user.
func (d *directory) seen(userID string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.seenLocked(userID)
}

func (d *directory) seenLocked(userID string) {
	if len(d.users) >= maxDirectory {
		clear(d.users)
	}
	d.users[userID] = struct{}{}
}

// lookup returns the DM channel of chatID when it is a user with a known DM
// channel, and whether chatID is a user the bot has seen.
func (d *directory) lookup(chatID string) (dm string, user bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	dm = d.dm[chatID]
	_, user = d.users[chatID]
	return dm, user || dm != ""
}

// resolve returns the channel to use for chatID: the DM channel of a user
// the bot has seen (opened now if need be), else chatID itself.
func (c *Channel) resolve(ctx context.Context, chatID string) (string, error) {
	dm, user := c.dms.lookup(chatID)
	switch {
	case dm != "":
		return dm, nil
	case user:
		return c.openDM(ctx, chatID)
	}
	return chatID, nil
}

// openDM opens (or finds) the DM channel with userID and remembers it.
func (c *Channel) openDM(ctx context.Context, userID string) (string, error) {
	var ch *discordgo.Channel
	err := c.withRetry(ctx, func(ctx context.Context) error {
		var err error
		ch, err = c.sess.UserChannelCreate(userID, discordgo.WithContext(ctx))
		return err
	})
	if err != nil {
		return "", fmt.Errorf("open a direct message channel with user %s: %w", userID, c.classify(err))
	}
	c.dms.remember(userID, ch.ID)
	return ch.ID, nil
}

// viaDM runs call on the channel for chatID. When Discord answers Unknown
// Channel for an id not known as a user, the id may be a user the bot has
// not seen yet: it opens that user's DM channel and calls once more.
func (c *Channel) viaDM(ctx context.Context, chatID string, call func(ctx context.Context, channelID string) error) error {
	channelID, err := c.resolve(ctx, chatID)
	if err != nil {
		return err
	}
	err = call(ctx, channelID)
	if channelID != chatID || !hasCode(err, codeUnknownChannel) {
		return err
	}
	dm, dmErr := c.openDM(ctx, chatID)
	if dmErr != nil {
		c.log.Debug("discord id is neither a channel nor a user", "chat_id", chatID, "error", c.redact(dmErr))
		return err
	}
	return call(ctx, dm)
}

// hasCode reports whether err is a Discord REST error with the JSON error
// code code.
func hasCode(err error, code int) bool {
	var rest *discordgo.RESTError
	return errors.As(err, &rest) && rest.Message != nil && rest.Message.Code == code
}
