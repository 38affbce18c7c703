package channels

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// File is a file the daemon sends: a photo, a voice message or a document.
// It rides on Outbound.File; the Outbound's Text is then its caption.
type File struct {
	// Kind is KindPhoto, KindVoice or KindDocument: how the platform shows
	// it. A platform without voice messages sends a voice as a file.
	Kind string
	// Name is the file name shown in the chat; it is safe already (no
	// path, no control characters).
	Name string
	// Type is the MIME type, taken from the bytes.
	Type string
	// Size is the length in bytes, so an adapter can refuse a file over its
	// platform's limit before it reads any of it.
	Size int64
	// Open streams the content. It is called once per send attempt and the
	// reader is closed by the adapter; a file is never held whole in
	// memory by the daemon.
	Open func(ctx context.Context) (io.ReadCloser, error)
}

// ErrFileTooLarge is wrapped by FileTooLargeError.
var ErrFileTooLarge = errors.New("file too large for the platform")

// FileTooLargeError says a platform does not take a file this large.
// Retrying cannot help, so it is also ErrPermanent; the sender tells the
// chat instead of dropping the file silently.
type FileTooLargeError struct {
	Platform string
	Name     string
	Size     int64
	Limit    int64
}

func (e *FileTooLargeError) Error() string {
	return fmt.Sprintf("%s: %s is %d bytes; the platform takes files up to %d bytes", e.Platform, e.Name, e.Size, e.Limit)
}

// Is makes a FileTooLargeError match ErrFileTooLarge and ErrPermanent.
func (e *FileTooLargeError) Is(target error) bool {
	return target == ErrFileTooLarge || target == ErrPermanent
}
