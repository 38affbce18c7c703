package slack

import (
	"fmt"
	"net/http"

	"github.com/switchboard-chat/switchboard/channels"
)

// slackFileHost is where Slack serves url_private_download and the
// upload_url of files.getUploadURLExternal. The bot token travels with
// every request there, so no other host is ever asked.
const slackFileHost = "files.slack.com"

// errForeignFileHost refuses a file link off Slack's file host: the bot
// token would go with the request, so it is never sent.
var errForeignFileHost = fmt.Errorf("slack: file link is not on Slack's file host; not fetched: %w", channels.ErrPermanent)

// fileHosts are where the bot token may be sent with a file: https on
// files.slack.com, or the scheme and host of the configured API URL (the
// fake in tests; every API call already sends the token there).
func (c *Channel) fileHosts() channels.FileHosts {
	return channels.FileHosts{Hosts: []string{slackFileHost}, API: c.opts.APIURL,
		Refused: errForeignFileHost, Name: "slack: file transfer"}
}

// fileHostAllowed reports whether link may receive the bot token.
func (c *Channel) fileHostAllowed(link string) bool { return c.fileHosts().Allows(link) }

// fileClient downloads and uploads files over the API transport, refusing
// redirects off the file hosts (see channels.FileHosts.Client).
func (c *Channel) fileClient() *http.Client { return c.fileHosts().Client(c.transport) }
