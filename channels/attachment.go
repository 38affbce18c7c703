package channels

import (
	"context"
	"io"
	"time"
)

// Attachment kinds: what the platform says a file is. Telegram names them
// this way; Slack and Discord attachments are mapped onto them.
const (
	KindPhoto     = "photo"
	KindDocument  = "document"
	KindVoice     = "voice"
	KindAudio     = "audio"
	KindVideo     = "video"
	KindVideoNote = "video_note"
)

// Attachment is one file a person sent with a message. Everything in it but
// Open comes from the sender and is untrusted: the name may hold "../" and
// the declared type and size may lie, so the file is sized and typed from
// its bytes when it is downloaded.
type Attachment struct {
	// Kind is one of the Kind* constants.
	Kind string
	// Name is the file name as sent.
	Name string
	// DeclaredType is the MIME type the platform or the sender claimed.
	DeclaredType string
	// Size is the declared size in bytes; 0 when the platform does not say.
	Size int64
	// Duration is the declared length of a voice message, audio or video;
	// 0 when the platform does not say.
	Duration time.Duration
	// Open downloads the file from the platform's own file host; the
	// adapter sets it, so no URL from the message is ever fetched directly.
	Open func(ctx context.Context) (io.ReadCloser, error)
}
