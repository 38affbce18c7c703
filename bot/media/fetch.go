package media

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/switchboard-chat/switchboard/channels"
)

// ErrTooLarge is returned (wrapped, with the limit in words) for an
// attachment larger than the limit: it is not downloaded past the limit.
var ErrTooLarge = errors.New("the file is too large")

// tooLarge names the limit so that the person can be told it.
func tooLarge(maxBytes int64) error {
	return fmt.Errorf("%w: the limit is %s", ErrTooLarge, HumanSize(maxBytes))
}

// Fetch downloads attachment a through its Open, at most maxBytes of it,
// and streams it into store while hashing it, so the whole file is never
// held in memory; the store links it to chat (Stored.Chat). A file larger than maxBytes (declared or read) is
// ErrTooLarge; a download that fails stores nothing.
func Fetch(ctx context.Context, a channels.Attachment, chat string, maxBytes int64, store Store) (Stored, error) {
	if a.Size > maxBytes {
		return Stored{}, tooLarge(maxBytes)
	}
	if a.Open == nil {
		return Stored{}, errors.New("media: the attachment cannot be downloaded (no Open)")
	}
	body, err := a.Open(ctx)
	if err != nil {
		return Stored{}, fmt.Errorf("media: download %s: %w", a.Kind, err)
	}
	defer body.Close()

	name := SafeName(a.Name)
	in := &intake{r: body, max: maxBytes, sum: sha256.New()}
	var stored Stored
	seal := func() Stored {
		stored = Stored{SHA256: hex.EncodeToString(in.sum.Sum(nil)), Name: name, Type: Sniff(in.head, name), Size: in.n, Chat: chat}
		return stored
	}
	if err := store.PutMedia(ctx, in, seal); err != nil {
		if errors.Is(err, ErrTooLarge) {
			return Stored{}, tooLarge(maxBytes)
		}
		return Stored{}, fmt.Errorf("media: store %s: %w", a.Kind, err)
	}
	return stored, nil
}

// intake reads a download for the store: it counts, hashes and keeps the
// first bytes for Sniff as they pass, and fails as soon as more than max
// bytes came (one byte past the limit is enough to know).
type intake struct {
	r    io.Reader
	max  int64
	n    int64
	sum  hash.Hash
	head []byte
}

// Read passes on at most max+1 bytes in all; past max it returns
// ErrTooLarge.
func (in *intake) Read(p []byte) (int, error) {
	left := in.max + 1 - in.n
	if left <= 0 {
		return 0, ErrTooLarge
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	k, err := in.r.Read(p)
	in.n += int64(k)
	in.sum.Write(p[:k])
	if room := sniffBytes - len(in.head); room > 0 {
		in.head = append(in.head, p[:min(k, room)]...)
	}
	if in.n > in.max {
		return k, ErrTooLarge
	}
	return k, err
}
