package media

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
)

// inboxDir is the workspace folder attachments are put in.
const inboxDir = "inbox"

// maxClashes bounds the " (n)" suffixes tried for a taken name.
const maxClashes = 1000

// PutInInbox writes the attachment s, streamed from src, to
// <dir>/inbox/<s.Name> and returns its workspace path "inbox/<name>". A
// taken name gets " (2)", " (3)"… before its extension; an existing file
// is never overwritten. Everything is opened through an os.Root of dir,
// so no name, symbolic link or "inbox" planted by a tool leads outside
// the workspace.
func PutInInbox(ctx context.Context, dir string, s Stored, src Source) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("media: workspace: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", fmt.Errorf("media: workspace: %w", err)
	}
	defer root.Close()
	if err := root.Mkdir(inboxDir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("media: %s: %w", inboxDir, err)
	}
	f, rel, err := createFree(root, SafeName(s.Name))
	if err != nil {
		return "", err
	}
	if err := copyStored(ctx, f, s, src); err != nil {
		f.Close()
		_ = root.Remove(rel)
		return "", err
	}
	if err := f.Close(); err != nil {
		_ = root.Remove(rel)
		return "", fmt.Errorf("media: write %s: %w", rel, err)
	}
	return rel, nil
}

// createFree creates inbox/name in root, or the first free "name (n).ext".
func createFree(root *os.Root, name string) (*os.File, string, error) {
	ext := path.Ext(name)
	if ext == name {
		ext = ""
	}
	stem := strings.TrimSuffix(name, ext)
	for n := 1; n <= maxClashes; n++ {
		candidate := name
		if n > 1 {
			suffix := fmt.Sprintf(" (%d)", n)
			candidate = shorten(stem, maxNameBytes-len(suffix)-len(ext)) + suffix + ext
		}
		rel := inboxDir + "/" + candidate
		f, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
		if err == nil {
			return f, rel, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, "", fmt.Errorf("media: create %s: %w", rel, err)
		}
	}
	return nil, "", fmt.Errorf("media: %s/%s: %d files of that name already", inboxDir, name, maxClashes)
}

// copyStored streams the content of s from src into f.
func copyStored(ctx context.Context, f *os.File, s Stored, src Source) error {
	body, _, err := src.OpenMedia(ctx, s.SHA256)
	if err != nil {
		return fmt.Errorf("media: read %s: %w", s.SHA256, err)
	}
	defer body.Close()
	if _, err := io.Copy(f, body); err != nil {
		return fmt.Errorf("media: write %s: %w", f.Name(), err)
	}
	return nil
}

// RemoveInbox deletes the inbox folder of the workspace dir, with the
// attachments put there; a workspace without one (or none at all) is left
// as it is. The folder is removed through an os.Root of dir, so a link
// planted as "inbox" removes only the link.
func RemoveInbox(dir string) error {
	root, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("media: workspace: %w", err)
	}
	defer root.Close()
	if err := root.RemoveAll(inboxDir); err != nil {
		return fmt.Errorf("media: remove %s: %w", inboxDir, err)
	}
	return nil
}
