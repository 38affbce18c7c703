package slack

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/slack-go/slack"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/markup"
)

// maxUpload is the largest file Slack takes: its file upload
// documentation allows up to 1 GB.
const maxUpload = 1_000_000_000

// sendFile uploads msg.File with Slack's upload v2 and shares it in msg.To
// (in its thread), the caption rendered like message text as the file's
// comment: files.getUploadURLExternal, the bytes streamed from File.Open
// to the upload URL, files.completeUploadExternal. A caption too long for
// one message goes on in messages after the file. Slack shows photos
// inline; it has no voice messages for bots, so a voice goes as a file.
//
// It returns *channels.FileTooLargeError over 1 GB, waits out short rate
// limits like Send, and returns the ts of the last message: the file's
// own when Slack already reports where it shared it (sharing is
// asynchronous), else "" unless caption parts followed.
func (c *Channel) sendFile(ctx context.Context, msg channels.Outbound) (string, error) {
	f := msg.File
	name := firstOf(f.Name, "file")
	switch {
	case f.Size > maxUpload:
		return "", &channels.FileTooLargeError{Platform: Platform, Name: name, Size: f.Size, Limit: maxUpload}
	case f.Size <= 0 || f.Open == nil:
		return "", fmt.Errorf("slack: send %s to %s: the file is empty and Slack takes no empty uploads: %w", name, msg.To, channels.ErrPermanent)
	case len(msg.Buttons) > 0:
		return "", fmt.Errorf("slack: send %s to %s: a Slack file carries no buttons; send them in a message of their own: %w", name, msg.To, channels.ErrPermanent)
	}
	channel, err := c.target(ctx, msg.To)
	if err != nil {
		return "", err
	}
	var comment string
	parts := markup.SlackMrkdwn(msg.Text, maxText)
	if len(parts) > 0 {
		comment, parts = parts[0], parts[1:]
	}
	fileID, err := c.uploadBytes(ctx, f, name)
	if err != nil {
		return "", fmt.Errorf("slack: send %s to %s: %w", name, msg.To, err)
	}
	err = c.retry(ctx, func(ctx context.Context) error {
		_, err := c.api.CompleteUploadExternalContext(ctx, slack.CompleteUploadExternalParameters{
			Files:           []slack.FileSummary{{ID: fileID, Title: name}},
			Channel:         channel,
			InitialComment:  comment,
			ThreadTimestamp: msg.To.ThreadID,
		})
		return err
	})
	if err != nil {
		return "", fmt.Errorf("slack: share %s in %s (files.completeUploadExternal): %w", name, msg.To, c.classify(err))
	}
	if len(parts) > 0 {
		return c.postParts(ctx, channel, msg.To, parts, nil)
	}
	return c.sharedTS(ctx, fileID, channel), nil
}

// uploadBytes asks Slack for an upload URL and streams f there, opening
// f again for each attempt a rate limit costs. It returns the file id.
func (c *Channel) uploadBytes(ctx context.Context, f *channels.File, name string) (string, error) {
	var up *slack.GetUploadURLExternalResponse
	err := c.retry(ctx, func(ctx context.Context) error {
		var err error
		up, err = c.api.GetUploadURLExternalContext(ctx, slack.GetUploadURLExternalParameters{FileName: name, FileSize: int(f.Size)})
		return err
	})
	if err != nil {
		return "", fmt.Errorf("files.getUploadURLExternal: %w", c.classify(err))
	}
	if !c.fileHostAllowed(up.UploadURL) {
		return "", fmt.Errorf("files.getUploadURLExternal named an upload URL off Slack's file host; check slack.api_url: %w: %w",
			errForeignFileHost, channels.ErrPermanent)
	}
	err = c.retry(ctx, func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, uploadTimeout(f.Size))
		defer cancel()
		rc, err := f.Open(ctx)
		if err != nil {
			return fmt.Errorf("open the file to upload: %w", err)
		}
		defer rc.Close()
		body := &sizedReader{r: rc, left: f.Size}
		err = c.uploads.UploadToURL(ctx, slack.UploadToURLParameters{UploadURL: up.UploadURL, Filename: name, Reader: body})
		if err == nil && body.left > 0 {
			// slack-go may answer before it sees the reader's error.
			err = fmt.Errorf("the file ended %d bytes short of its size: %w", body.left, io.ErrUnexpectedEOF)
		}
		return err
	})
	if err != nil {
		return "", fmt.Errorf("upload: %w", c.classify(err))
	}
	return up.FileID, nil
}

// uploadTimeout bounds one upload so a stalled connection cannot hold the
// outbox forever: a minute, plus a minute per 8 MB (about 130 KB/s).
func uploadTimeout(size int64) time.Duration {
	return time.Minute + time.Duration(size/8_000_000)*time.Minute
}

// sharedTS is the ts of the message Slack made for the file in channel,
// as files.info reports it; "" when Slack has not shared it yet or the
// call fails. The file is delivered either way, so nothing is retried.
func (c *Channel) sharedTS(ctx context.Context, fileID, channel string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	f, _, _, err := c.api.GetFileInfoContext(ctx, fileID, 1, 1)
	if err != nil {
		c.log.Debug("slack files.info after upload", "file", fileID, "err", c.redact(err))
		return ""
	}
	for _, shares := range []map[string][]slack.ShareFileInfo{f.Shares.Public, f.Shares.Private} {
		if s := shares[channel]; len(s) > 0 {
			return s[len(s)-1].Ts
		}
	}
	return ""
}

// sizedReader reads exactly left bytes from r: Slack was told the length
// before the upload, so a file ending early is an error, not a shorter
// file, and one growing meanwhile is cut at the announced length.
type sizedReader struct {
	r    io.Reader
	left int64
}

func (s *sizedReader) Read(p []byte) (int, error) {
	if s.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > s.left {
		p = p[:s.left]
	}
	n, err := s.r.Read(p)
	s.left -= int64(n)
	if err == io.EOF && s.left > 0 {
		return n, fmt.Errorf("the file ended %d bytes short of its size: %w", s.left, io.ErrUnexpectedEOF)
	}
	return n, err
}
