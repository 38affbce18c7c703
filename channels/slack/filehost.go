package slack

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// slackFileHost is where Slack serves url_private_download and the
// upload_url of files.getUploadURLExternal. The bot token travels with
// every request there, so no other host is ever asked.
const slackFileHost = "files.slack.com"

// errForeignFileHost refuses a file link off Slack's file host: the bot
// token would go with the request, so it is never sent.
var errForeignFileHost = errors.New("slack: file link is not on Slack's file host; not fetched")

// fileHostAllowed reports whether link may receive the bot token: https on
// files.slack.com, or the scheme and host of the configured API URL (the
// fake in tests; every API call already sends the token there).
func (c *Channel) fileHostAllowed(link string) bool {
	u, err := url.Parse(link)
	if err != nil || u.User != nil || u.Host == "" {
		return false
	}
	if u.Scheme == "https" && strings.EqualFold(u.Host, slackFileHost) {
		return true
	}
	api, err := url.Parse(c.opts.APIURL)
	return err == nil && api.Host != "" && u.Scheme == api.Scheme && strings.EqualFold(u.Host, api.Host)
}

// fileClient downloads and uploads files over the API transport. It has no
// overall timeout, since a large file takes long: callers bound each
// transfer with their context. A redirect off the allowed hosts is refused
// like a foreign link, so the token never follows it.
func (c *Channel) fileClient() *http.Client {
	return &http.Client{
		Transport: c.transport,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("slack: file transfer: too many redirects")
			}
			if !c.fileHostAllowed(req.URL.String()) {
				return errForeignFileHost
			}
			return nil
		},
	}
}
