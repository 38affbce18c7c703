package discord

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/switchboard-chat/switchboard/channels"
)

// attachments returns the files m carries, one Attachment each. Each one's
// Open downloads the attachment's URL, but only from Discord's CDN: the URL
// comes in the message, so it is checked, never trusted.
func (c *Channel) attachments(m *discordgo.Message) []channels.Attachment {
	if len(m.Attachments) == 0 {
		return nil
	}
	voice := m.Flags&discordgo.MessageFlagsIsVoiceMessage != 0
	out := make([]channels.Attachment, 0, len(m.Attachments))
	for _, a := range m.Attachments {
		if a == nil {
			continue
		}
		link := a.URL
		name := a.Filename
		if name == "" {
			name = "file"
		}
		out = append(out, channels.Attachment{
			Kind: attachmentKind(a.ContentType, voice), Name: name, DeclaredType: a.ContentType, Size: int64(a.Size),
			Open: func(ctx context.Context) (io.ReadCloser, error) { return c.openAttachment(ctx, link) },
		})
	}
	return out
}

// attachmentKind maps an attachment's declared type onto a Kind. Discord
// marks a recorded voice message on the message (IS_VOICE_MESSAGE), not
// on its file, which is Ogg Opus audio.
func attachmentKind(contentType string, voiceMessage bool) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = ""
	}
	major, _, _ := strings.Cut(strings.ToLower(mt), "/")
	switch {
	case voiceMessage && (major == "audio" || major == ""):
		return channels.KindVoice
	case major == "image":
		return channels.KindPhoto
	case major == "audio":
		return channels.KindAudio
	case major == "video":
		return channels.KindVideo
	}
	return channels.KindDocument
}

// errForeignFileHost refuses an attachment URL that is not on Discord's
// CDN: files are fetched from nowhere else.
var errForeignFileHost = errors.New("discord: attachment link is not on Discord's CDN; not fetched")

// cdnHost reports whether host is one of Discord's attachment hosts.
func cdnHost(host string) bool {
	return host == "cdn.discordapp.com" || host == "media.discordapp.net"
}

// fileHost reports whether link may be downloaded: https on Discord's CDN,
// or, when Options.APIURL points elsewhere (a test server), that server.
func (c *Channel) fileHost(link string) bool {
	u, err := url.Parse(link)
	if err != nil || u.User != nil || u.Host == "" {
		return false
	}
	if u.Scheme == "https" && cdnHost(u.Host) {
		return true
	}
	if c.opts.APIURL == DefaultAPIURL {
		return false
	}
	api, err := url.Parse(c.opts.APIURL)
	return err == nil && u.Scheme == api.Scheme && u.Host == api.Host
}

// fileClient downloads attachments over transport. A redirect away from the
// allowed hosts is refused like a foreign link. It sends no bot token: CDN
// links are signed and need none.
func (c *Channel) fileClient(transport http.RoundTripper) *http.Client {
	return &http.Client{
		Transport: transport,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("discord: attachment download: too many redirects")
			}
			if !c.fileHost(req.URL.String()) {
				return errForeignFileHost
			}
			return nil
		},
	}
}

// openAttachment opens the download of link, waiting out short rate limits
// (the Retry-After of the latest 429, within Options.MaxRetries and
// MaxRetryWait). The caller closes the body.
func (c *Channel) openAttachment(ctx context.Context, link string) (io.ReadCloser, error) {
	if !c.fileHost(link) {
		return nil, errForeignFileHost
	}
	var body io.ReadCloser
	err := c.withRetry(ctx, func(ctx context.Context) error {
		var err error
		body, err = c.downloadOnce(ctx, link)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("discord: attachment download: %w", c.redact(err))
	}
	return body, nil
}

// downloadOnce makes one download request for link.
func (c *Channel) downloadOnce(ctx context.Context, link string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, link, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.files.Do(req)
	if err != nil {
		return nil, err
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return resp.Body, nil
	case http.StatusTooManyRequests:
		_ = resp.Body.Close()
		return nil, &downloadLimitedError{after: lastRetryAfter(resp.Header)}
	}
	_ = resp.Body.Close()
	if resp.StatusCode >= 400 && resp.StatusCode < 500 {
		return nil, fmt.Errorf("answered %s; the link may have expired, ask for the file again: %w", resp.Status, channels.ErrPermanent)
	}
	return nil, fmt.Errorf("answered %s", resp.Status)
}

// downloadLimitedError is a 429 from the CDN.
type downloadLimitedError struct{ after time.Duration }

func (e *downloadLimitedError) Error() string {
	return "Discord's CDN answered 429 Too Many Requests; retry after " + e.after.String()
}

// lastRetryAfter is how long the last Retry-After header of h asks to
// wait, in seconds or as a date: a second when absent or unreadable, at
// least a millisecond.
func lastRetryAfter(h http.Header) time.Duration {
	vals := h.Values("Retry-After")
	if len(vals) == 0 {
		return time.Second
	}
	v := strings.TrimSpace(vals[len(vals)-1])
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 && secs < 1e6 {
		return max(time.Duration(secs*float64(time.Second)), time.Millisecond)
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(time.Until(at), time.Millisecond)
	}
	return time.Second
}
