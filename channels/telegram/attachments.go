package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/switchboard-chat/switchboard/channels"
)

// fileRef is what the Bot API says about one file of a message.
type fileRef struct {
	kind, name, mime, fileID string
	size                     int64
	seconds                  int // a voice's, audio's or video's length
}

// attachments returns the files m carries, one Attachment each: of a photo
// only its largest size, the one Telegram lists last.
func (c *Channel) attachments(m *models.Message) []channels.Attachment {
	var refs []fileRef
	if n := len(m.Photo); n > 0 {
		p := m.Photo[n-1]
		refs = append(refs, fileRef{kind: channels.KindPhoto, name: "photo.jpg", fileID: p.FileID, size: int64(p.FileSize)})
	}
	if d := m.Document; d != nil {
		refs = append(refs, fileRef{kind: channels.KindDocument, name: orName(d.FileName, "document"), mime: d.MimeType, fileID: d.FileID, size: d.FileSize})
	}
	if v := m.Voice; v != nil {
		refs = append(refs, fileRef{kind: channels.KindVoice, name: "voice.ogg", mime: v.MimeType, fileID: v.FileID, size: v.FileSize, seconds: v.Duration})
	}
	if a := m.Audio; a != nil {
		refs = append(refs, fileRef{kind: channels.KindAudio, name: orName(a.FileName, "audio.mp3"), mime: a.MimeType, fileID: a.FileID, size: a.FileSize, seconds: a.Duration})
	}
	if v := m.Video; v != nil {
		refs = append(refs, fileRef{kind: channels.KindVideo, name: orName(v.FileName, "video.mp4"), mime: v.MimeType, fileID: v.FileID, size: v.FileSize, seconds: v.Duration})
	}
	if v := m.VideoNote; v != nil {
		refs = append(refs, fileRef{kind: channels.KindVideoNote, name: "video_note.mp4", fileID: v.FileID, size: int64(v.FileSize), seconds: v.Duration})
	}
	if len(refs) == 0 {
		return nil
	}
	out := make([]channels.Attachment, 0, len(refs))
	for _, r := range refs {
		fileID := r.fileID
		out = append(out, channels.Attachment{
			Kind: r.kind, Name: r.name, DeclaredType: r.mime, Size: r.size, Duration: time.Duration(r.seconds) * time.Second,
			Open: func(ctx context.Context) (io.ReadCloser, error) { return c.openFile(ctx, fileID) },
		})
	}
	return out
}

// orName is name, or fallback when the sender gave none.
func orName(name, fallback string) string {
	if name == "" {
		return fallback
	}
	return name
}

// errForeignFileHost refuses a download link that does not point at the
// configured Bot API server: files are fetched from nowhere else.
var errForeignFileHost = fmt.Errorf("telegram: file link is not on the Bot API server; not fetched: %w", channels.ErrPermanent)

// botDownloadLimit is the largest file the Bot API lets a bot download
// (getFile answers "file is too big" above it); a local Bot API server
// has no such limit. Telegram states it as 20 MB.
const botDownloadLimit = 20_000_000

// fileLimits is the cooldown key of getFile and downloads: they go to no
// chat, and Telegram's 429 for them holds for the bot's file calls.
const fileLimits = "files"

// openFile asks the Bot API where fileID is (getFile) and opens its
// download from the same server, waiting out 429 answers as sends do. The
// caller closes the body.
func (c *Channel) openFile(ctx context.Context, fileID string) (io.ReadCloser, error) {
	var f *models.File
	err := c.retry(ctx, fileLimits, func(ctx context.Context) error {
		var err error
		f, err = c.bot.GetFile(ctx, &bot.GetFileParams{FileID: fileID})
		return err
	})
	switch {
	case errors.Is(err, bot.ErrorBadRequest) && strings.Contains(err.Error(), "file is too big"):
		return nil, &channels.FileTooLargeError{Platform: "Telegram", Limit: botDownloadLimit}
	case errors.Is(err, bot.ErrorBadRequest):
		// A file id Telegram no longer knows stays unknown.
		return nil, fmt.Errorf("telegram: getFile: %w: %w", c.redact(err), channels.ErrPermanent)
	case err != nil:
		return nil, fmt.Errorf("telegram: getFile: %w", c.redact(err))
	case f.FilePath == "":
		return nil, &channels.FileTooLargeError{Platform: "Telegram", Limit: botDownloadLimit}
	}
	link := c.bot.FileDownloadLink(f)
	if !c.fileHosts().Allows(link) {
		return nil, errForeignFileHost
	}
	var body io.ReadCloser
	err = c.retry(ctx, fileLimits, func(ctx context.Context) error {
		var err error
		body, err = c.download(ctx, link)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("telegram: file download: %w", c.redact(err))
	}
	return body, nil
}

// download GETs link; a 429 comes back as *channels.RetryAfterError, with
// the retry_after of its body or its Retry-After header.
func (c *Channel) download(ctx context.Context, link string) (io.ReadCloser, error) {
	resp, err := channels.Download{Client: c.files, Wait: downloadRetryAfter}.Once(ctx, link)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// downloadRetryAfter reads how long a 429 asks to wait: the Bot API's
// parameters.retry_after, else the last Retry-After header; at least a
// second, as for every Bot API call.
func downloadRetryAfter(resp *http.Response) time.Duration {
	var r struct {
		Parameters struct {
			RetryAfter int `json:"retry_after"`
		} `json:"parameters"`
	}
	if json.NewDecoder(io.LimitReader(resp.Body, 4096)).Decode(&r) == nil && r.Parameters.RetryAfter > 0 {
		return time.Duration(r.Parameters.RetryAfter) * time.Second
	}
	return max(channels.LastRetryAfter(resp.Header), time.Second)
}

// fileHosts is the configured Bot API server alone: it names every file
// link (getFile), so files are fetched from nowhere else.
func (c *Channel) fileHosts() channels.FileHosts {
	return channels.FileHosts{API: c.opts.APIURL, Refused: errForeignFileHost, Name: "telegram: file download"}
}
