package discord

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/bwmarrin/discordgo"
)

// Application flags telling that the Message Content intent is enabled
// (for verified bots, and for bots in fewer than 100 servers).
const (
	flagMessageContent        = 1 << 18
	flagMessageContentLimited = 1 << 19
)

// Check verifies the configuration once without starting, for a doctor
// command: the token (GET /users/@me), that "Message Content Intent" is
// enabled for the application (GET /applications/@me), and that the API
// hands out a gateway URL. It describes the bot on success and says what
// to fix on failure.
func (c *Channel) Check(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	me, err := c.sess.User("@me", discordgo.WithContext(ctx))
	if err != nil {
		if fatal := fatalError(err); fatal != nil {
			return "", c.redact(fatal)
		}
		return "", fmt.Errorf("cannot reach the Discord API at %s: %w", c.opts.APIURL, c.redact(err))
	}
	body, err := c.sess.RequestWithBucketID("GET", discordgo.EndpointApplication("@me"), nil,
		discordgo.EndpointApplications, discordgo.WithContext(ctx))
	if err != nil {
		return "", fmt.Errorf("GET /applications/@me: %w", c.redact(err))
	}
	var app discordgo.Application
	if err := json.Unmarshal(body, &app); err != nil {
		return "", fmt.Errorf("GET /applications/@me: undecodable answer: %w", err)
	}
	if app.Flags&(flagMessageContent|flagMessageContentLimited) == 0 {
		return "", fmt.Errorf("the bot cannot read messages: enable \"Message Content Intent\" under Bot → Privileged Gateway Intents in the Discord Developer Portal (application %s)", app.ID)
	}
	gateway, err := c.sess.Gateway(discordgo.WithContext(ctx))
	if err != nil {
		return "", fmt.Errorf("GET /gateway: %w", c.redact(err))
	}
	return fmt.Sprintf("bot %s (%s), gateway %s", me.Username, me.ID, gateway), nil
}
