package media

import (
	"context"
	"io"
	"time"
)

// Stored describes one attachment kept in the store.
type Stored struct {
	// SHA256 is the hex SHA-256 of the content: the store's key.
	SHA256 string
	// Name is the sender's file name made safe (SafeName); the store keys
	// content, not names, so OpenMedia leaves it empty.
	Name string
	// Type is the MIME type sniffed from the bytes (Sniff).
	Type string
	// Size is the content's length in bytes.
	Size int64
	// Chat is the chat (platform:chat_id) the file was sent in or made
	// for; the store links the content to it, so /forget finds it. Empty:
	// linked to no chat. The same bytes in two chats are one content with
	// two links.
	Chat string
}

// Source reads stored attachments back.
type Source interface {
	// OpenMedia streams the content stored under sha; the reader must be
	// closed. An unknown sha is an error wrapping bot.ErrNotFound.
	OpenMedia(ctx context.Context, sha string) (io.ReadCloser, Stored, error)
}

// Store keeps attachments durably, keyed by their content's hash.
type Store interface {
	Source
	// PutMedia streams body into the store and, once body is drained,
	// records it under seal().SHA256; seal is called only after body
	// returned io.EOF, so the hash it reports covers every byte. Content
	// already stored under that hash is kept once. When reading body
	// fails nothing is stored and the error wraps body's.
	PutMedia(ctx context.Context, body io.Reader, seal func() Stored) error
	// PruneMedia deletes what was stored before olderThan and returns how
	// many attachments went.
	PruneMedia(ctx context.Context, olderThan time.Time) (int, error)
}
