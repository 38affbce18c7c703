package media

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/tools"
	toolfs "github.com/switchboard-chat/switchboard/tools/fs"
)

// Queue is the part of the durable outbox (bot.Outbox) the tools that send
// files write to.
type Queue interface {
	Enqueue(ctx context.Context, m bot.OutboxMessage) (int64, error)
}

// ToolOptions wires the media tools. A nil service makes the tools that
// need it say plainly which setting turns it on.
type ToolOptions struct {
	// Files opens files of the caller's own workspace, confined like the
	// fs tools (the same jail and deny_paths).
	Files *toolfs.Files
	// Store keeps what create_image, tts and send_file send, like inbound
	// media: capped, hashed, typed from the bytes.
	Store Store
	// Outbox queues the files for the call's chat; Nudge, when set, wakes
	// the dispatcher after a row is queued.
	Outbox Queue
	Nudge  func()
	// Scrub removes secrets from a caption; nil keeps it as it is.
	Scrub func(string) string
	// MaxBytes is media.max_bytes: the largest file read or sent.
	MaxBytes int64

	// Transcriber (media.transcription) serves read_audio and read_video.
	Transcriber Transcriber
	// Vision (media.vision) serves read_image and read_video.
	Vision ImageReader
	// Images (media.images) serves create_image.
	Images ImageMaker
	// Speaker (media.tts) serves tts.
	Speaker Speaker
}

// NewTools returns the media tools: read_image, read_audio, read_document,
// read_video, create_image and tts (group media) and send_file (group
// messaging).
func NewTools(o ToolOptions) []tools.Tool {
	if o.Scrub == nil {
		o.Scrub = func(s string) string { return s }
	}
	t := &mediaTools{o: o}
	return []tools.Tool{&ReadImage{t}, &ReadAudio{t}, &ReadDocumentTool{t}, &ReadVideo{t},
		&CreateImage{t}, &TTS{t}, &SendFile{t}}
}

// mediaTools is what the media tools share: their options and the way
// they open workspace files and send files.
type mediaTools struct{ o ToolOptions }

// workspaceFile is a file of the caller's workspace, opened for a tool.
type workspaceFile struct {
	*os.File
	info fs.FileInfo
	path string // as the model named it
	name string // its base name, made safe
	typ  string // sniffed from its first bytes
}

// open opens the workspace file p of the call in ctx and types it from its
// bytes; the error is the message for the model.
func (t *mediaTools) open(ctx context.Context, p string) (*workspaceFile, error) {
	if strings.TrimSpace(p) == "" {
		return nil, fmt.Errorf(`missing "path": pass a file of this conversation's workspace, e.g. "inbox/photo.jpg"`)
	}
	if t.o.Files == nil {
		return nil, fmt.Errorf("workspace files are not available here; ask an admin to set data_dir")
	}
	call, _ := tools.CallFrom(ctx)
	f, info, err := t.o.Files.Open(call, p)
	if err != nil {
		return nil, err
	}
	head := make([]byte, sniffBytes)
	n, err := f.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		f.Close()
		return nil, fmt.Errorf("%s cannot be read: %v", p, err)
	}
	name := SafeName(path.Base(strings.ReplaceAll(p, `\`, "/")))
	return &workspaceFile{File: f, info: info, path: p, name: name, typ: Sniff(head[:n], name)}, nil
}

// describe names the file for a result: "inbox/a.pdf (application/pdf, 12 KB)".
func (w *workspaceFile) describe() string {
	return fmt.Sprintf("%s (%s, %s)", w.path, w.typ, HumanSize(w.info.Size()))
}

// tooBig says whether the file is larger than the limit, and the message.
func (t *mediaTools) tooBig(w *workspaceFile) (string, bool) {
	if t.o.MaxBytes > 0 && w.info.Size() > t.o.MaxBytes {
		return fmt.Sprintf("%s is larger than the %s limit (media.max_bytes); use a smaller file", w.describe(), HumanSize(t.o.MaxBytes)), true
	}
	return "", false
}

// decodeArgs decodes a tool's arguments, naming the expected shape on error.
func decodeArgs(raw json.RawMessage, v any, shape string) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("invalid arguments: pass %s", shape)
	}
	return nil
}

// serviceError is the message for a service (media.NAME) that failed.
func serviceError(what, setting string, err error) string {
	return fmt.Sprintf("the %s failed: %v; try again later, or ask an admin to check %s", what, err, setting)
}
