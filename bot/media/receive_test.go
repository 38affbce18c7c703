package media_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot/media"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// pngHead is the start of a PNG file: enough for Sniff.
var pngHead = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"

// file is an attachment of kind whose Open serves body, or fails with err.
func file(kind, name, body string, err error) channels.Attachment {
	return channels.Attachment{Kind: kind, Name: name, Size: int64(len(body)), Open: func(context.Context) (io.ReadCloser, error) {
		if err != nil {
			return nil, err
		}
		return io.NopCloser(strings.NewReader(body)), nil
	}}
}

// transcriber records what it was asked to transcribe.
type transcriber struct {
	name, audio string
	text        string
	err         error
}

func (tr *transcriber) Transcribe(_ context.Context, name string, audio io.Reader) (string, error) {
	b, err := io.ReadAll(audio)
	if err != nil {
		return "", err
	}
	tr.name, tr.audio = name, string(b)
	return tr.text, tr.err
}

func TestMediaReceive(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	tr := &transcriber{text: " deploy is done \n"}
	r := &media.Receiver{Store: db, MaxBytes: 1000, Transcriber: tr}
	ws := filepath.Join(t.TempDir(), "ws")
	voice := file(channels.KindVoice, "voice.ogg", "OggS-voice-bytes", nil)
	voice.Duration = 72 * time.Second
	got, err := r.Receive(ctx, "telegram:1", ws, []channels.Attachment{
		file(channels.KindPhoto, "shot.png", pngHead, nil),
		file(channels.KindDocument, "../../app.log", "ERROR one\n", nil),
		voice,
	})
	if err != nil {
		t.Fatal(err)
	}
	wantLines := []string{
		"[attachment: inbox/shot.png, image/png, 29 bytes]",
		"[attachment: inbox/app.log, text/plain, 10 bytes]",
		"[text of inbox/app.log]\nERROR one\n",
		"[attachment: inbox/voice.ogg, text/plain, 16 bytes]",
		"[voice 1:12] deploy is done",
	}
	if !reflect.DeepEqual(got.Lines, wantLines) {
		t.Fatalf("lines = %q, want %q", got.Lines, wantLines)
	}
	if len(got.Images) != 1 || got.Images[0].Type != "image/png" || len(got.Images[0].SHA256) != 64 || got.Images[0].Data != nil {
		t.Fatalf("images = %+v, want one image/png reference without data", got.Images)
	}
	if got.Tell != nil {
		t.Fatalf("tell = %q, want nothing", got.Tell)
	}
	for rel, want := range map[string]string{"inbox/shot.png": pngHead, "inbox/app.log": "ERROR one\n", "inbox/voice.ogg": "OggS-voice-bytes"} {
		if b, err := os.ReadFile(filepath.Join(ws, rel)); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", rel, b, err, want)
		}
	}
	if tr.name != "voice.ogg" || tr.audio != "OggS-voice-bytes" {
		t.Fatalf("transcriber got %q with %q, want voice.ogg with the stored bytes", tr.name, tr.audio)
	}
	if b := readBack(t, db, got.Images[0].SHA256); string(b) != pngHead {
		t.Fatalf("stored image = %q", b)
	}
}

func TestMediaReceiveRefusesWhatCannotCome(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	tr := &transcriber{err: errors.New("503 from the whisper server")}
	r := &media.Receiver{Store: db, MaxBytes: 20, Transcriber: tr}
	ws := t.TempDir()
	gone := fmt.Errorf("file expired: %w", channels.ErrPermanent)
	got, err := r.Receive(ctx, "telegram:1", ws, []channels.Attachment{
		file(channels.KindDocument, "report.zip", strings.Repeat("z", 21), nil),
		file(channels.KindPhoto, "", "", gone),
		file(channels.KindAudio, "song.mp3", "ID3-audio", nil),
		file(channels.KindVideo, "talk.mp4", "", &channels.FileTooLargeError{Platform: "Telegram", Limit: 20_000_000}),
	})
	if err != nil {
		t.Fatalf("Receive = %v; a file that cannot come is no error", err)
	}
	wantLines := []string{
		"[attachment: report.zip, not downloaded: larger than the 20 bytes limit]",
		"[attachment: photo, not downloaded: the platform would not serve it]",
		"[attachment: inbox/song.mp3, audio/mpeg, 9 bytes]",
		"[audio: the transcript is unavailable (the transcription service failed)]",
		"[attachment: talk.mp4, not downloaded: larger than Telegram lets bots download (20 MB)]",
	}
	if !reflect.DeepEqual(got.Lines, wantLines) {
		t.Fatalf("lines = %q, want %q", got.Lines, wantLines)
	}
	wantTell := []string{
		"report.zip is larger than the 20 bytes limit; send a smaller file.",
		"I could not download your photo: the platform would not serve it. Send it again.",
		"talk.mp4 is larger than Telegram lets bots download (20 MB); send a smaller file.",
	}
	if !reflect.DeepEqual(got.Tell, wantTell) {
		t.Fatalf("tell = %q, want %q", got.Tell, wantTell)
	}
	if entries, _ := os.ReadDir(filepath.Join(ws, "inbox")); len(entries) != 1 || entries[0].Name() != "song.mp3" {
		t.Fatalf("inbox = %v, want song.mp3 only", entries)
	}
}

func TestMediaReceiveFailedDownloadLeavesNothing(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	r := &media.Receiver{Store: db, MaxBytes: 1000}
	ws := t.TempDir()
	_, err := r.Receive(ctx, "telegram:1", ws, []channels.Attachment{
		file(channels.KindDocument, "a.txt", "first", nil),
		file(channels.KindDocument, "b.txt", "", errors.New("connection reset")),
	})
	if err == nil || !strings.Contains(err.Error(), "connection reset") || !strings.Contains(err.Error(), "redelivered") {
		t.Fatalf("Receive with a failing download = %v, want its error saying it is tried again", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "inbox")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a failed Receive put files in the workspace (%v)", err)
	}
	// Voice without a transcriber is only named.
	got, err := r.Receive(ctx, "telegram:1", ws, []channels.Attachment{file(channels.KindVoice, "v.ogg", "OggS", nil)})
	if err != nil || len(got.Lines) != 1 || !strings.HasPrefix(got.Lines[0], "[attachment: inbox/v.ogg") {
		t.Fatalf("voice without a transcriber = %q, %v", got.Lines, err)
	}
	if got.Images != nil {
		t.Fatalf("a voice gave images %+v", got.Images)
	}
}

func TestMediaReceiveGivesFilesToTheWorkspaceOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root can give files to another user")
	}
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	r := &media.Receiver{Store: db, MaxBytes: 1000, Owner: &media.FileOwner{UID: 65534, GID: 65534}}
	ws := t.TempDir()
	if _, err := r.Receive(ctx, "telegram:1", ws, []channels.Attachment{file(channels.KindDocument, "app.log", "ERROR\n", nil)}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"inbox", "inbox/app.log"} {
		fi, err := os.Stat(filepath.Join(ws, p))
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != 65534 || st.Gid != 65534 {
			t.Errorf("%s belongs to %d:%d, want the exec user 65534:65534", p, st.Uid, st.Gid)
		}
	}
}

func TestMediaReceiveAgainNamesTheSameFile(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	r := &media.Receiver{Store: db, MaxBytes: 1000}
	ws := t.TempDir()
	lines := func(body string) string {
		t.Helper()
		got, err := r.Receive(ctx, "telegram:1", ws, []channels.Attachment{file(channels.KindDocument, "app.log", body, nil)})
		if err != nil {
			t.Fatal(err)
		}
		return got.Lines[0] // the attachment line; the text follows
	}
	first := lines("ERROR one\n")
	if again := lines("ERROR one\n"); again != first || first != "[attachment: inbox/app.log, text/plain, 10 bytes]" {
		t.Fatalf("the same file twice = %q then %q; want inbox/app.log both times", first, again)
	}
	if changed := lines("ERROR two\n"); changed != "[attachment: inbox/app (2).log, text/plain, 10 bytes]" {
		t.Fatalf("another file of the same name = %q, want inbox/app (2).log", changed)
	}
	// A FIFO where the file would be is neither read nor waited on.
	if err := syscall.Mkfifo(filepath.Join(ws, "inbox", "pipe.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := r.Receive(ctx, "telegram:1", ws, []channels.Attachment{file(channels.KindDocument, "pipe.txt", "data", nil)})
	if err != nil || got.Lines[0] != "[attachment: inbox/pipe (2).txt, text/plain, 4 bytes]" {
		t.Fatalf("beside a FIFO = %q, %v", got.Lines, err)
	}
	if entries, _ := os.ReadDir(filepath.Join(ws, "inbox")); len(entries) != 4 {
		t.Fatalf("inbox holds %d entries, want 4 (app.log, app (2).log, the FIFO, pipe (2).txt)", len(entries))
	}
}
