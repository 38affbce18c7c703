package slack

import (
	"context"
	"fmt"
	"time"
)

// Check verifies the configuration once without starting, for a doctor
// command: auth.test for the bot token and, with an app token,
// apps.connections.open (the Socket Mode URL it hands out is not dialled).
// It describes the bot on success and says what to fix on failure.
func (c *Channel) Check(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	r, err := c.api.AuthTestContext(ctx)
	if err != nil {
		if isAuthError(err) {
			return "", fmt.Errorf("Slack rejected the bot token (%w); check slack.bot_token", c.redact(err))
		}
		return "", fmt.Errorf("cannot reach the Slack API at %s: %w", c.opts.APIURL, c.redact(err))
	}
	desc := fmt.Sprintf("bot %s (%s) in team %s", r.User, r.UserID, r.TeamID)
	if c.opts.AppToken == "" {
		return desc + ", Events API at /webhooks/slack", nil
	}
	if _, _, err := c.api.StartSocketModeContext(ctx); err != nil {
		return "", fmt.Errorf("Socket Mode refused the app token (%w); check slack.app_token (xapp-, scope connections:write)", c.redact(err))
	}
	return desc + ", Socket Mode", nil
}
