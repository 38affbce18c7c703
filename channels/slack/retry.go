package slack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/slack-go/slack"

	"github.com/switchboard-chat/switchboard/channels"
)

// retry calls fn, waiting out 429 answers within MaxRetries,
// MaxRetryWait and ctx's deadline (see channels.RateLimits).
func (c *Channel) retry(ctx context.Context, fn func(context.Context) error) error {
	return channels.RateLimits{Platform: "slack", MaxRetries: c.opts.MaxRetries, MaxWait: c.opts.MaxRetryWait,
		Limited: rateLimited, Redact: c.redact, Logger: c.log}.Do(ctx, fn)
}

// rateLimited reports whether err is Slack asking us to slow down, and for
// how long.
func rateLimited(err error) (time.Duration, bool) {
	var rl *slack.RateLimitedError
	var ra *channels.RetryAfterError
	var code slack.StatusCodeError
	var se slack.SlackErrorResponse
	switch {
	case errors.As(err, &rl):
		return max(rl.RetryAfter, time.Second), true
	case errors.As(err, &ra): // a file download (channels.Download)
		return max(ra.After, time.Second), true
	case errors.As(err, &code) && code.Code == http.StatusTooManyRequests,
		errors.As(err, &se) && se.Err == "ratelimited":
		return time.Second, true
	}
	return 0, false
}

// permanent maps the Slack errors retrying cannot fix to what to do.
var permanent = map[string]string{
	"channel_not_found":       "the channel does not exist or the bot cannot see it; check the channel id and invite the bot",
	"not_in_channel":          "the bot is not a member of the channel; invite it with /invite @<bot name>",
	"is_archived":             "the channel is archived; unarchive it or use another one",
	"invalid_auth":            "Slack rejected the bot token; check slack.bot_token",
	"not_authed":              "no bot token was sent; set slack.bot_token",
	"account_inactive":        "the bot token belongs to a deactivated app or workspace; reinstall the Slack app",
	"token_revoked":           "the bot token was revoked; reinstall the Slack app and update slack.bot_token",
	"token_expired":           "the bot token expired; reinstall the Slack app and update slack.bot_token",
	"not_allowed_token_type":  "this call needs the bot token (xoxb-); check slack.bot_token",
	"team_access_not_granted": "the app is not installed in this workspace; install it",
	"restricted_action":       "a workspace setting forbids the bot to post here; ask a Slack admin",
	"msg_too_long":            "the message is too long for Slack",
	"no_text":                 "the message has no text",
	"invalid_blocks":          "Slack refused the message blocks",
	"invalid_blocks_format":   "Slack refused the message blocks",
	"invalid_arguments":       "Slack refused the request's arguments",
	"message_not_found":       "the message no longer exists",
	"cant_update_message":     "the bot cannot edit this message (it is not the bot's own)",
	"edit_window_closed":      "the message is too old to edit",
	"user_not_found":          "no such Slack user; check the user id",
	"user_not_visible":        "the bot cannot see this Slack user",
	"user_disabled":           "the Slack user is deactivated",
	"cannot_dm_bot":           "Slack does not allow direct messages to a bot user",
	"ekm_access_denied":       "the workspace's key management denies access",
}

// classify marks errors retrying cannot fix with channels.ErrPermanent and
// says what to do about them.
func (c *Channel) classify(err error) error {
	err = c.redact(err)
	var ra *channels.RetryAfterError
	var se slack.SlackErrorResponse
	var code slack.StatusCodeError
	switch {
	case errors.As(err, &ra):
		return err
	case errors.As(err, &se) && se.Err == "missing_scope":
		return fmt.Errorf("the Slack app lacks the %q scope; add it under OAuth & Permissions and reinstall the app: %w: %w",
			se.Needed, channels.ErrPermanent, err)
	case errors.As(err, &se) && permanent[se.Err] != "":
		return fmt.Errorf("%s: %w: %w", permanent[se.Err], channels.ErrPermanent, err)
	case errors.As(err, &code) && code.Code >= 400 && code.Code < 500 &&
		code.Code != http.StatusRequestTimeout && code.Code != http.StatusTooManyRequests:
		return fmt.Errorf("the Slack API answered HTTP %d; check slack.api_url: %w: %w", code.Code, channels.ErrPermanent, err)
	}
	return err
}
