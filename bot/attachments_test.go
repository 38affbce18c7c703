package bot_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/media"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/tools"
	toolexec "github.com/switchboard-chat/switchboard/tools/exec"
)

// mediaSetup turns a test pipeline's media on: attachments are received
// into its PostgreSQL and workspaces under Root, files are sent from it,
// and the router's appends are recorded. Its methods take a nil setup as
// media off.
type mediaSetup struct {
	Root      string
	MaxBytes  int64
	FileLimit int64 // of the test channel; 0: none
	appended  *appends
}

func (m *mediaSetup) fileLimit() int64 {
	if m == nil {
		return 0
	}
	return m.FileLimit
}

func (m *mediaSetup) openFile(db *postgres.DB) func(context.Context, string) (io.ReadCloser, error) {
	if m == nil {
		return nil
	}
	return media.Opener(db)
}

func (m *mediaSetup) wire(o *bot.Options, db *postgres.DB) {
	if m == nil {
		return
	}
	m.appended = &appends{History: db}
	o.History = m.appended
	o.Attachments = &media.Receiver{Store: db, MaxBytes: m.MaxBytes}
	o.Workspace = m.workspaces().For
}

func (m *mediaSetup) workspaces() toolexec.Workspaces { return toolexec.Workspaces{Root: m.Root} }

// inbox returns the inbox of the test chat's session with the default
// agent.
func (m *mediaSetup) inbox(t *testing.T, chat string) string {
	t.Helper()
	key := agentcore.SessionKey{Agent: "default", Scope: channels.Address{Platform: "test", ChatID: chat}.String()}.String()
	dir, err := m.workspaces().For(tools.Call{Session: key, Agent: "default"})
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "inbox")
}

// appends records the user messages the router appends, as it hands them
// to the store.
type appends struct {
	agentcore.History
	mu   sync.Mutex
	msgs []agentcore.Message
}

func (a *appends) Append(ctx context.Context, session string, msgs ...agentcore.Message) (int64, error) {
	seq, err := a.History.Append(ctx, session, msgs...)
	if err == nil {
		a.mu.Lock()
		a.msgs = append(a.msgs, msgs...)
		a.mu.Unlock()
	}
	return seq, err
}

func (a *appends) users() []agentcore.Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []agentcore.Message
	for _, m := range a.msgs {
		if m.Role == agentcore.RoleUser {
			out = append(out, m)
		}
	}
	return out
}

func mediaPipeline(t *testing.T, m mediaSetup) (*pipeline, *mediaSetup) {
	t.Helper()
	if m.Root == "" {
		m.Root = t.TempDir()
	}
	p := startPipeline(t, pipelineOptions{Media: &m})
	return p, &m
}

// pngBytes is the start of a PNG: enough to be typed image/png.
const pngBytes = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"

// attached is an attachment whose Open serves body; opens counts calls
// and fails runs before an open succeeds.
func attached(kind, name, body string, fails int, opens *atomic.Int32) channels.Attachment {
	return channels.Attachment{Kind: kind, Name: name, Size: int64(len(body)), Open: func(context.Context) (io.ReadCloser, error) {
		if opens != nil && int(opens.Add(1)) <= fails {
			return nil, errors.New("connection reset by the file host")
		}
		return io.NopCloser(strings.NewReader(body)), nil
	}}
}

// lastUserText is what the model read last as a user message.
func lastUserText(p *pipeline) string {
	reqs := p.llm.Requests()
	if len(reqs) == 0 {
		return ""
	}
	msgs := reqs[len(reqs)-1].Messages
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return msgs[i].Content
		}
	}
	return ""
}

func TestRouterStoresAttachmentsBeforeAck(t *testing.T) {
	p, m := mediaPipeline(t, mediaSetup{MaxBytes: 1000})
	ctx := context.Background()
	in := msg("m1", "u1", "what is this?")
	in.Attachments = []channels.Attachment{attached(channels.KindPhoto, "shot.png", pngBytes, 0, nil)}
	if err := p.router.Handle(ctx, in); err != nil {
		t.Fatal(err)
	}
	// Stored by the time Handle returned (the ack).
	line := "[attachment: inbox/shot.png, image/png, 29 bytes]"
	users := m.appended.users()
	if len(users) != 1 || users[0].Content != "what is this?\n"+line {
		t.Fatalf("stored user messages = %+v, want the caption and %s", users, line)
	}
	if imgs := users[0].Images; len(imgs) != 1 || imgs[0].Type != "image/png" || len(imgs[0].SHA256) != 64 {
		t.Fatalf("stored images = %+v, want one image/png reference", imgs)
	}
	if b, err := os.ReadFile(filepath.Join(m.inbox(t, "m1"), "shot.png")); err != nil || string(b) != pngBytes {
		t.Fatalf("inbox/shot.png in the session's workspace = %q, %v", b, err)
	}
	p.ch.WaitFor(t, "m1", 1)
	if got := lastUserText(p); got != "what is this?\n"+line {
		t.Fatalf("the model read %q, want the caption and the attachment line", got)
	}
	// A file without a caption is a message too.
	bare := msg("m1", "u1", "")
	bare.Attachments = []channels.Attachment{attached(channels.KindDocument, "notes.md", "# hi\n", 0, nil)}
	if err := p.router.Handle(ctx, bare); err != nil {
		t.Fatal(err)
	}
	p.ch.WaitFor(t, "m1", 2)
	if got := lastUserText(p); got != "[attachment: inbox/notes.md, text/markdown, 5 bytes]\n[text of inbox/notes.md]\n# hi\n" {
		t.Fatalf("the model read %q for a file alone, want its line and its text", got)
	}
}

func TestRouterTellsOfTooLargeAttachment(t *testing.T) {
	p, m := mediaPipeline(t, mediaSetup{MaxBytes: 1000})
	ctx := context.Background()
	in := msg("m2", "u2", "two files")
	in.Attachments = []channels.Attachment{
		{Kind: channels.KindDocument, Name: "report.zip", Size: 5000, Open: func(context.Context) (io.ReadCloser, error) {
			t.Error("a file declared over the limit was downloaded")
			return nil, errors.New("not here")
		}},
		attached(channels.KindDocument, "small.txt", "ok\n", 0, nil),
	}
	if err := p.router.Handle(ctx, in); err != nil {
		t.Fatal(err)
	}
	got := p.ch.WaitFor(t, "m2", 2)
	var told bool
	for _, o := range got {
		told = told || o.Text == "report.zip is larger than the 1 KB limit; send a smaller file."
	}
	if !told {
		t.Fatalf("chat got %+v, want the person told report.zip is over the limit", got)
	}
	want := "two files\n[attachment: report.zip, not downloaded: larger than the 1 KB limit]\n[attachment: inbox/small.txt, text/plain, 3 bytes]\n[text of inbox/small.txt]\nok\n"
	if users := m.appended.users(); len(users) != 1 || users[0].Content != want {
		t.Fatalf("stored = %+v, want %q", users, want)
	}
	if _, err := os.Stat(filepath.Join(m.inbox(t, "m2"), "small.txt")); err != nil {
		t.Fatal(err)
	}
}

func TestRouterRedeliversFailedDownload(t *testing.T) {
	p, m := mediaPipeline(t, mediaSetup{MaxBytes: 1000})
	ctx := context.Background()
	var opens atomic.Int32
	in := msg("m3", "u3", "the log")
	in.Attachments = []channels.Attachment{attached(channels.KindDocument, "app.log", "ERROR x\n", 1, &opens)}
	if err := p.router.Handle(ctx, in); err == nil {
		t.Fatal("Handle with a failed download = nil; want an error so the platform redelivers")
	}
	key := agentcore.SessionKey{Agent: "default", Scope: in.Address().String()}.String()
	if stored, err := p.db.Load(ctx, key, 0); err != nil || len(stored) != 0 {
		t.Fatalf("after a failed download the session holds %+v, %v; want nothing", stored, err)
	}
	for range 2 { // redelivered, then redelivered again
		if err := p.router.Handle(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	p.ch.WaitFor(t, "m3", 1)
	stored, err := p.db.Load(ctx, key, 0)
	if err != nil {
		t.Fatal(err)
	}
	var users int
	for _, s := range stored {
		if s.Role == agentcore.RoleUser {
			users++
			if s.Content != "the log\n[attachment: inbox/app.log, text/plain, 8 bytes]\n[text of inbox/app.log]\nERROR x\n" {
				t.Errorf("stored %q", s.Content)
			}
		}
	}
	if users != 1 {
		t.Fatalf("the message was stored %d times, want once", users)
	}
	if b, err := os.ReadFile(filepath.Join(m.inbox(t, "m3"), "app.log")); err != nil || string(b) != "ERROR x\n" {
		t.Fatalf("inbox/app.log = %q, %v", b, err)
	}
}

func TestRouterNamesAttachmentsWhenMediaIsOff(t *testing.T) {
	p := newPipeline(t, bot.Limits{}, bot.AccessOptions{})
	in := msg("m4", "u4", "")
	in.Attachments = []channels.Attachment{attached(channels.KindVoice, "voice\n.ogg", "OggS", 0, nil)}
	if err := p.router.Handle(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	p.ch.WaitFor(t, "m4", 1)
	if got := lastUserText(p); got != `[attachment: "voice\n.ogg" (not downloaded: media is off)]` {
		t.Fatalf("the model read %q", got)
	}
}

// queueFile stores body as the media store would an attachment and
// queues it to chat as report.pdf with caption.
func queueFile(t *testing.T, p *pipeline, chat, caption, body string) media.Stored {
	t.Helper()
	ctx := context.Background()
	s, err := media.Fetch(ctx, attached(channels.KindDocument, "report.pdf", body, 0, nil), "", 1<<20, p.db)
	if err != nil {
		t.Fatal(err)
	}
	row := bot.OutboxMessage{To: channels.Address{Platform: "test", ChatID: chat}, Text: caption,
		File: &bot.OutboxFile{SHA256: s.SHA256, Kind: channels.KindDocument, Name: "report.pdf", Type: s.Type, Size: s.Size}}
	if _, err := p.db.Enqueue(ctx, row); err != nil {
		t.Fatal(err)
	}
	p.nudge()
	return s
}

func TestDispatcherSendsStoredFile(t *testing.T) {
	p, _ := mediaPipeline(t, mediaSetup{MaxBytes: 1000})
	s := queueFile(t, p, "f1", "here it is", "%PDF-1.7 the report")
	got := p.ch.WaitFor(t, "f1", 1)[0]
	if got.Text != "here it is" || got.File == nil || got.File.Name != "report.pdf" || got.File.Kind != channels.KindDocument ||
		got.File.Type != "application/pdf" || got.File.Size != s.Size {
		t.Fatalf("sent %+v (file %+v)", got, got.File)
	}
	if b := channeltest.ReadFile(t, got); string(b) != "%PDF-1.7 the report" {
		t.Fatalf("the chat received %q", b)
	}
}

func TestDispatcherTellsOfFileTooLargeForPlatform(t *testing.T) {
	p, _ := mediaPipeline(t, mediaSetup{MaxBytes: 1000, FileLimit: 10})
	ctx := context.Background()
	queueFile(t, p, "f2", "the report", "%PDF-1.7 far more than ten bytes")
	got := p.ch.WaitFor(t, "f2", 1)
	want := "the report\n\nI made report.pdf (32 bytes) but test takes files up to 10 bytes."
	if len(got) != 1 || got[0].File != nil || got[0].Text != want {
		t.Fatalf("sent %+v, want one text %q", got, want)
	}
	// Marks are written off the send path: wait for this one.
	var status string
	for deadline := time.Now().Add(10 * time.Second); status != "sent" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if err := p.db.Pool().QueryRow(ctx, `SELECT status FROM outbox WHERE chat_id = 'f2'`).Scan(&status); err != nil {
			t.Fatal(err)
		}
	}
	if status != "sent" {
		t.Fatalf("the row is %q; want sent (the text is its delivery)", status)
	}
}
