package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/switchboard-chat/switchboard/channels"
)

// attachments returns one Attachment per file shared with a message.
// subtypes maps file ids to the file subtype slack-go does not decode
// ("slack_audio" marks a voice clip recorded in Slack).
func (c *Channel) attachments(files []slack.File, subtypes map[string]string) []channels.Attachment {
	if len(files) == 0 {
		return nil
	}
	out := make([]channels.Attachment, 0, len(files))
	for _, f := range files {
		link := firstOf(f.URLPrivateDownload, f.URLPrivate)
		declared := f.Mimetype
		out = append(out, channels.Attachment{
			Kind:         fileKind(f, subtypes[f.ID]),
			Name:         firstOf(f.Name, f.Title, "file"),
			DeclaredType: declared,
			Size:         int64(max(f.Size, 0)),
			Duration:     time.Duration(max(f.DurationMs, 0)) * time.Millisecond,
			Open: func(ctx context.Context) (io.ReadCloser, error) {
				return c.openFile(ctx, link, declared)
			},
		})
	}
	return out
}

// filetypeKinds maps Slack's filetype to a kind for files whose mimetype
// Slack left empty.
var filetypeKinds = map[string]string{
	"png": channels.KindPhoto, "jpg": channels.KindPhoto, "jpeg": channels.KindPhoto, "gif": channels.KindPhoto,
	"webp": channels.KindPhoto, "bmp": channels.KindPhoto, "heic": channels.KindPhoto,
	"mp3": channels.KindAudio, "m4a": channels.KindAudio, "ogg": channels.KindAudio, "wav": channels.KindAudio,
	"flac": channels.KindAudio, "aac": channels.KindAudio, "opus": channels.KindAudio,
	"mp4": channels.KindVideo, "mov": channels.KindVideo, "webm": channels.KindVideo, "mkv": channels.KindVideo,
	"avi": channels.KindVideo,
}

// fileKind is what f is, from its subtype, mimetype and filetype: a voice
// clip, image, audio or video, else a document.
func fileKind(f slack.File, subtype string) string {
	if subtype == "slack_audio" {
		return channels.KindVoice
	}
	mime := strings.ToLower(f.Mimetype)
	switch {
	case strings.HasPrefix(mime, "image/"):
		return channels.KindPhoto
	case strings.HasPrefix(mime, "audio/"):
		return channels.KindAudio
	case strings.HasPrefix(mime, "video/"):
		return channels.KindVideo
	case mime == "":
		if k, ok := filetypeKinds[strings.ToLower(f.Filetype)]; ok {
			return k
		}
	}
	return channels.KindDocument
}

// fileSubtypes reads the subtype of each file of a raw message or
// app_mention event; nil when there is none.
func fileSubtypes(raw *json.RawMessage) map[string]string {
	if raw == nil {
		return nil
	}
	var ev struct {
		Files []struct {
			ID      string `json:"id"`
			Subtype string `json:"subtype"`
		} `json:"files"`
	}
	if json.Unmarshal(*raw, &ev) != nil {
		return nil
	}
	var out map[string]string
	for _, f := range ev.Files {
		if f.Subtype != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[f.ID] = f.Subtype
		}
	}
	return out
}

// openFile downloads link with the bot token, if link is on Slack's file
// host, waiting out 429 answers like any API call. The caller closes the
// body.
func (c *Channel) openFile(ctx context.Context, link, declared string) (io.ReadCloser, error) {
	if link == "" {
		return nil, fmt.Errorf("slack: the file has no download link (it is external, deleted or hidden by the workspace's plan): %w", channels.ErrPermanent)
	}
	if !c.fileHostAllowed(link) {
		return nil, errForeignFileHost
	}
	var body io.ReadCloser
	err := c.retry(ctx, func(ctx context.Context) error {
		var err error
		body, err = c.download(ctx, link, declared)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("slack: file download: %w", c.redact(err))
	}
	return body, nil
}

// download makes one GET of link with the bot token. A 429 comes back as
// *channels.RetryAfterError with the wait the answer asked for.
func (c *Channel) download(ctx context.Context, link, declared string) (io.ReadCloser, error) {
	resp, err := channels.Download{Client: c.files,
		Header: http.Header{"Authorization": {"Bearer " + c.opts.BotToken}}}.Once(ctx, link)
	var status *channels.StatusError
	switch {
	case errors.As(err, &status) && (status.Code == http.StatusUnauthorized || status.Code == http.StatusForbidden):
		return nil, fmt.Errorf("Slack answered %s; give the app the files:read scope under OAuth & Permissions and reinstall it: %w",
			status.Status, channels.ErrPermanent)
	case errors.As(err, &status) && status.Code != http.StatusTooManyRequests:
		return nil, fmt.Errorf("Slack answered %s: %w", status.Status, slack.StatusCodeError{Code: status.Code, Status: status.Status})
	case err != nil:
		return nil, err
	case isHTML(resp.Header.Get("Content-Type")) && !isHTML(declared):
		// Slack answers a download without a usable token with its
		// sign-in page and 200, not an error.
		_ = resp.Body.Close()
		return nil, fmt.Errorf("Slack answered with a web page instead of the file; the bot token lacks the files:read scope: add it under OAuth & Permissions and reinstall the app: %w",
			channels.ErrPermanent)
	}
	return resp.Body, nil
}

func isHTML(contentType string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(contentType)), "text/html")
}
