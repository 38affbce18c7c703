package discord

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
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
			Duration: time.Duration(a.DurationSecs * float64(time.Second)),
			Open:     func(ctx context.Context) (io.ReadCloser, error) { return c.openAttachment(ctx, link) },
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
var errForeignFileHost = fmt.Errorf("discord: attachment link is not on Discord's CDN; not fetched: %w", channels.ErrPermanent)

// cdnHosts are Discord's attachment hosts.
var cdnHosts = []string{"cdn.discordapp.com", "media.discordapp.net"}

// fileHosts are where attachments may be downloaded from: https on
// Discord's CDN, or, when Options.APIURL points elsewhere (a test server),
// that server. Discord's own API host serves no attachments.
func (c *Channel) fileHosts() channels.FileHosts {
	h := channels.FileHosts{Hosts: cdnHosts, Refused: errForeignFileHost, Name: "discord: attachment download"}
	if c.opts.APIURL != DefaultAPIURL {
		h.API = c.opts.APIURL
	}
	return h
}

// fileHost reports whether link may be downloaded.
func (c *Channel) fileHost(link string) bool { return c.fileHosts().Allows(link) }

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

// downloadOnce makes one download request for link. It sends no bot
// token: CDN links are signed and need none.
func (c *Channel) downloadOnce(ctx context.Context, link string) (io.ReadCloser, error) {
	resp, err := channels.Download{Client: c.files}.Once(ctx, link)
	var status *channels.StatusError
	if errors.As(err, &status) && status.Code >= 400 && status.Code < 500 && status.Code != http.StatusTooManyRequests {
		return nil, fmt.Errorf("%w; the link may have expired, ask for the file again: %w", status, channels.ErrPermanent)
	}
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}
