package media

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"syscall"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
)

var _ bot.AttachmentReceiver = (*Receiver)(nil)

// Receiver takes in the attachments of a message for the router: each is
// downloaded into the Store, put in the conversation's workspace inbox and
// named to the model by a Line; a picture also becomes an image reference
// a document its text (the first DocumentLimit characters), and speech,
// when a Transcriber is set, its transcript.
type Receiver struct {
	// Store keeps the downloads (storage/postgres).
	Store Store
	// MaxBytes is the largest file downloaded (media.max_bytes).
	MaxBytes int64
	// Transcriber turns voice and audio into text; nil: they get their
	// line only.
	Transcriber Transcriber
	// Owner, when set, is given the files put in a workspace (and its
	// inbox): the unprivileged user exec runs as must be able to work on
	// them. Nil: they stay the daemon's.
	Owner *FileOwner
	// Log records transcription failures; nil logs nothing.
	Log *slog.Logger
}

// FileOwner is the user and group the workspaces belong to.
type FileOwner struct {
	UID, GID int
}

// fetched is one attachment after its download: stored, or refused with
// the line the model reads and what the person is told.
type fetched struct {
	a      channels.Attachment
	stored Stored
	line   string // set when refused
	tell   string
}

// Receive implements bot.AttachmentReceiver. Every file is downloaded
// before any is put in workspace, so a download that fails (the message
// is then redelivered) leaves no files behind; one that is too large, or
// that the platform will never serve, is refused and the rest go on.
func (r *Receiver) Receive(ctx context.Context, chat, workspace string, atts []channels.Attachment) (bot.ReceivedAttachments, error) {
	all := make([]fetched, 0, len(atts))
	for _, a := range atts {
		f, err := r.fetch(ctx, chat, a)
		if err != nil {
			return bot.ReceivedAttachments{}, err
		}
		all = append(all, f)
	}
	var out bot.ReceivedAttachments
	for _, f := range all {
		if f.line != "" {
			out.Lines = append(out.Lines, f.line)
			out.Tell = append(out.Tell, f.tell)
			continue
		}
		rel, err := r.place(ctx, workspace, f.stored)
		if err != nil {
			return bot.ReceivedAttachments{}, fmt.Errorf("put %s in the workspace: %w; it is tried again when the message is redelivered", f.stored.Name, err)
		}
		out.Lines = append(out.Lines, Line(rel, f.stored.Type, f.stored.Size))
		if strings.HasPrefix(f.stored.Type, "image/") {
			out.Images = append(out.Images, agentcore.Image{SHA256: f.stored.SHA256, Type: f.stored.Type})
		}
		if IsDocument(f.stored.Type) && !speech(f.a, f.stored) {
			out.Lines = append(out.Lines, r.documentText(ctx, workspace, rel, f.stored))
		}
		if r.Transcriber != nil && speech(f.a, f.stored) {
			out.Lines = append(out.Lines, r.transcribe(ctx, f.a, f.stored))
		}
	}
	return out, nil
}

// place puts s in workspace's inbox and returns its workspace path. When
// inbox/<name> holds these very bytes already (the message was
// redelivered, or the same file sent again) that file is the one named:
// the inbox does not fill with copies.
func (r *Receiver) place(ctx context.Context, workspace string, s Stored) (string, error) {
	if rel, ok := holds(workspace, s); ok {
		return rel, nil
	}
	rel, err := PutInInbox(ctx, workspace, s, r.Store)
	if err != nil {
		return "", err
	}
	return rel, r.give(workspace, rel)
}

// holds reports whether workspace's inbox/<s.Name> is a regular file with
// s's content, and returns its workspace path.
func holds(workspace string, s Stored) (string, bool) {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return "", false
	}
	defer root.Close()
	rel := inboxDir + "/" + SafeName(s.Name)
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0) // a FIFO planted there must not hang the message
	if err != nil {
		return "", false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() != s.Size {
		return "", false
	}
	sum := sha256.New()
	if _, err := io.Copy(sum, f); err != nil {
		return "", false
	}
	return rel, hex.EncodeToString(sum.Sum(nil)) == s.SHA256
}

// give hands rel, a file PutInInbox made in workspace, and its folder to
// r.Owner, through an os.Root so no link leads the change elsewhere.
func (r *Receiver) give(workspace, rel string) error {
	if r.Owner == nil {
		return nil
	}
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, p := range []string{inboxDir, rel} {
		if err := root.Lchown(p, r.Owner.UID, r.Owner.GID); err != nil {
			return fmt.Errorf("give %s to uid %d: %w", p, r.Owner.UID, err)
		}
	}
	return nil
}

// fetch downloads a. Only a failure that a redelivery may cure is an
// error.
func (r *Receiver) fetch(ctx context.Context, chat string, a channels.Attachment) (fetched, error) {
	s, err := Fetch(ctx, a, chat, r.MaxBytes, r.Store)
	var platform *channels.FileTooLargeError
	name := SafeName(a.Name)
	if strings.TrimSpace(a.Name) == "" && a.Kind != "" {
		name = a.Kind // not "file": the kind says more
	}
	switch {
	case err == nil:
		return fetched{a: a, stored: s}, nil
	case errors.Is(err, ErrTooLarge):
		limit := HumanSize(r.MaxBytes)
		return fetched{a: a,
			line: fmt.Sprintf("[attachment: %s, not downloaded: larger than the %s limit]", name, limit),
			tell: fmt.Sprintf("%s is larger than the %s limit; send a smaller file.", told(a, name), limit)}, nil
	case errors.As(err, &platform):
		limit := HumanSize(platform.Limit)
		return fetched{a: a,
			line: fmt.Sprintf("[attachment: %s, not downloaded: larger than %s lets bots download (%s)]", name, platform.Platform, limit),
			tell: fmt.Sprintf("%s is larger than %s lets bots download (%s); send a smaller file.", told(a, name), platform.Platform, limit)}, nil
	case errors.Is(err, channels.ErrPermanent):
		return fetched{a: a,
			line: fmt.Sprintf("[attachment: %s, not downloaded: the platform would not serve it]", name),
			tell: fmt.Sprintf("I could not download %s: the platform would not serve it. Send it again.", told(a, name))}, nil
	}
	return fetched{}, fmt.Errorf("download %s: %w; it is tried again when the message is redelivered", name, err)
}

// told is how the person is told of attachment a, named name: by its name
// when it had one, else by its kind ("your photo").
func told(a channels.Attachment, name string) string {
	if strings.TrimSpace(a.Name) == "" && a.Kind != "" {
		return "your " + strings.ReplaceAll(a.Kind, "_", " ")
	}
	return name
}

// documentText is what the model reads of the document s put at rel: its
// first DocumentLimit characters and how to read on. A document that
// cannot be read as text still came: the line says why and the file is
// in the inbox for the tools.
func (r *Receiver) documentText(ctx context.Context, workspace, rel string, s Stored) string {
	ex, err := DocumentText(ctx, workspace, rel, s.Type)
	if err != nil {
		if r.Log != nil {
			r.Log.Warn("a document's text could not be read; the message goes on without it", "sha256", s.SHA256, "err", err)
		}
		return fmt.Sprintf("[the text of %s could not be read: %v]", rel, err)
	}
	text := fmt.Sprintf("[text of %s]\n%s", rel, ex.Text)
	if more := ReadOn(rel, ex); more != "" {
		text += "\n" + more
	}
	return text
}

// speech reports whether a is voice or audio to transcribe.
func speech(a channels.Attachment, s Stored) bool {
	return a.Kind == channels.KindVoice || a.Kind == channels.KindAudio || strings.HasPrefix(s.Type, "audio/")
}

// transcribe returns the transcript line of s, read from the stored copy:
// "[voice 0:12] <transcript>" (the length when the platform gives it). A
// failure is a line saying the transcript is
// unavailable: the message still goes on, with its file in the inbox.
func (r *Receiver) transcribe(ctx context.Context, a channels.Attachment, s Stored) string {
	label := "audio"
	if a.Kind == channels.KindVoice {
		label = "voice"
	}
	if a.Duration > 0 {
		label += " " + clock(a.Duration.Seconds())
	}
	text, err := r.readSpeech(ctx, s)
	if err != nil {
		if r.Log != nil {
			r.Log.Warn("transcription failed; the message goes on without it", "sha256", s.SHA256, "err", err)
		}
		return fmt.Sprintf("[%s: the transcript is unavailable (the transcription service failed)]", label)
	}
	return fmt.Sprintf("[%s] %s", label, strings.TrimSpace(text))
}

// readSpeech transcribes the stored content of s.
func (r *Receiver) readSpeech(ctx context.Context, s Stored) (string, error) {
	body, _, err := r.Store.OpenMedia(ctx, s.SHA256)
	if err != nil {
		return "", err
	}
	defer body.Close()
	return r.Transcriber.Transcribe(ctx, s.Name, body)
}

// Opener reads the stored content by its SHA-256, for the dispatcher's
// OpenFile (bot.DispatcherOptions).
func Opener(src Source) func(ctx context.Context, sha256 string) (io.ReadCloser, error) {
	return func(ctx context.Context, sha256 string) (io.ReadCloser, error) {
		body, _, err := src.OpenMedia(ctx, sha256)
		return body, err
	}
}
