package media_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/media"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
	"github.com/switchboard-chat/switchboard/tools"
	toolexec "github.com/switchboard-chat/switchboard/tools/exec"
	toolfs "github.com/switchboard-chat/switchboard/tools/fs"
)

// pngBytes starts like a PNG, which is all Sniff looks at.
var pngBytes = append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{7}, 200)...)

// oggBytes starts like an Ogg stream.
var oggBytes = append([]byte("OggS\x00\x02"), bytes.Repeat([]byte{3}, 300)...)

// queue records the outbox rows the tools write.
type queue struct {
	mu   sync.Mutex
	rows []bot.OutboxMessage
	err  error
}

func (q *queue) Enqueue(_ context.Context, m bot.OutboxMessage) (int64, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err != nil {
		return 0, q.err
	}
	q.rows = append(q.rows, m)
	return int64(len(q.rows)), nil
}

// fakes are the model services, recording what they are sent.
type fakes struct {
	mu     sync.Mutex
	heard  [][]byte // audio the transcriber got
	names  []string // the file names it got
	seen   [][]byte // images the vision model got
	types  []string
	asked  []string
	image  []byte // what the image model draws
	speech []byte // what the speaker says
	fail   error  // every service fails with it when set
}

func (f *fakes) Transcribe(_ context.Context, name string, audio io.Reader) (string, error) {
	data, err := io.ReadAll(audio)
	if err != nil {
		return "", err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.heard, f.names = append(f.heard, data), append(f.names, name)
	if f.fail != nil {
		return "", f.fail
	}
	return "the deploy is done", nil
}

func (f *fakes) ReadImage(_ context.Context, typ string, image []byte, prompt string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen, f.types, f.asked = append(f.seen, image), append(f.types, typ), append(f.asked, prompt)
	if f.fail != nil {
		return "", f.fail
	}
	return "a red error dialog saying DISK FULL", nil
}

func (f *fakes) CreateImage(context.Context, string, string) ([]byte, error) {
	if f.fail != nil {
		return nil, f.fail
	}
	return f.image, nil
}

func (f *fakes) Speak(context.Context, string, string) (io.ReadCloser, error) {
	if f.fail != nil {
		return nil, f.fail
	}
	return io.NopCloser(bytes.NewReader(f.speech)), nil
}

// harness runs the media tools through a registry, as one conversation.
type harness struct {
	t       *testing.T
	db      *postgres.DB
	reg     *tools.Registry
	queue   *queue
	fakes   *fakes
	nudges  int
	call    tools.Call
	ws      string // the call's workspace
	root    string // all workspaces
	outside string // a directory beside them
}

// newHarness returns the tools with every service faked, media.max_bytes
// maxBytes; set h.fakes fields or pass nil services through mutate.
func newHarness(t *testing.T, maxBytes int64, mutate func(*media.ToolOptions)) *harness {
	t.Helper()
	ctx := context.Background()
	base := t.TempDir()
	h := &harness{t: t, db: pgtest.Open(t, ctx), queue: &queue{}, fakes: &fakes{image: pngBytes, speech: oggBytes},
		root: filepath.Join(base, "workspaces"), outside: filepath.Join(base, "outside"),
		call: tools.Call{Channel: "telegram", ChatID: "42", ThreadID: "7", PeerKind: "group", UserID: "telegram:1", Session: "agent:telegram:42:7", Agent: "agent"}}
	ws := toolexec.Workspaces{Root: h.root}
	dir, err := ws.For(h.call)
	if err != nil {
		t.Fatal(err)
	}
	h.ws = dir
	if err := os.MkdirAll(h.outside, 0o700); err != nil {
		t.Fatal(err)
	}
	o := media.ToolOptions{Files: toolfs.NewFiles(toolfs.Options{Workspaces: ws}), Store: h.db, Outbox: h.queue,
		Nudge: func() { h.nudges++ }, MaxBytes: maxBytes,
		Transcriber: h.fakes, Vision: h.fakes, Images: h.fakes, Speaker: h.fakes}
	if mutate != nil {
		mutate(&o)
	}
	h.reg = tools.NewRegistry(tools.RegistryOptions{})
	for _, tool := range media.NewTools(o) {
		if err := h.reg.Register(tool); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// write puts a file in the call's workspace.
func (h *harness) write(rel string, data []byte) {
	h.t.Helper()
	p := filepath.Join(h.ws, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o600); err != nil {
		h.t.Fatal(err)
	}
}

// run calls tool with args (a JSON object) as the harness's conversation.
func (h *harness) run(tool string, args any) tools.Result {
	h.t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		h.t.Fatal(err)
	}
	return h.reg.Execute(context.Background(), h.call, tool, raw)
}

// content reads back what the store keeps under sha.
func (h *harness) content(sha string) []byte {
	h.t.Helper()
	return readBack(h.t, h.db, sha)
}

var errDown = errors.New("502 Bad Gateway from 10.0.0.9")
