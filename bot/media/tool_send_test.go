package media_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/media"
	"github.com/switchboard-chat/switchboard/bot/media/mediatest"
	"github.com/switchboard-chat/switchboard/channels"
)

// oneRow returns the only outbox row queued, checking it goes to the
// call's chat and thread with a file.
func (h *harness) oneRow() bot.OutboxMessage {
	h.t.Helper()
	if len(h.queue.rows) != 1 {
		h.t.Fatalf("%d outbox rows queued, want 1: %+v", len(h.queue.rows), h.queue.rows)
	}
	row := h.queue.rows[0]
	if want := (channels.Address{Platform: "telegram", ChatID: "42", ThreadID: "7"}); row.To != want {
		h.t.Fatalf("row goes to %v, want the call's chat and thread %v", row.To, want)
	}
	if row.File == nil {
		h.t.Fatalf("row %+v has no file", row)
	}
	if h.nudges != 1 {
		h.t.Fatalf("the dispatcher was nudged %d times, want 1", h.nudges)
	}
	return row
}

// noRows checks that nothing was queued for the chat.
func (h *harness) noRows() {
	h.t.Helper()
	if len(h.queue.rows) != 0 {
		h.t.Fatalf("rows queued: %+v", h.queue.rows)
	}
}

func TestMediaSendFileQueuesTheStoredBytes(t *testing.T) {
	h := newHarness(t, 1_000_000, nil)
	report := mediatest.MinimalPDF("Quarterly report")
	h.write("out/report.pdf", report)
	res := h.run("send_file", map[string]string{"path": "out/report.pdf", "caption": "the report"})
	if res.IsError || res.ForLLM != "sent report.pdf ("+media.HumanSize(int64(len(report)))+") to this chat" {
		t.Fatalf("send_file = %+v", res)
	}
	row := h.oneRow()
	want := bot.OutboxFile{SHA256: row.File.SHA256, Kind: channels.KindDocument, Name: "report.pdf", Type: "application/pdf", Size: int64(len(report))}
	if *row.File != want || row.Text != "the report" {
		t.Fatalf("row = %q with %+v, want caption and %+v", row.Text, *row.File, want)
	}
	if got := h.content(row.File.SHA256); !bytes.Equal(got, report) {
		t.Fatalf("the stored file is %d bytes that differ from the workspace file's %d", len(got), len(report))
	}
}

func TestMediaSendFilePictureGoesAsPhoto(t *testing.T) {
	h := newHarness(t, 1_000_000, nil)
	h.write("chart", pngBytes) // the bytes say PNG, whatever the name
	if res := h.run("send_file", map[string]string{"path": "chart"}); res.IsError {
		t.Fatal(res.ForLLM)
	}
	if f := h.oneRow().File; f.Kind != channels.KindPhoto || f.Type != "image/png" || f.Name != "chart" {
		t.Fatalf("a PNG went as %+v, want a photo", f)
	}
}

func TestMediaSendFileLimits(t *testing.T) {
	h := newHarness(t, 1000, nil)
	h.write("big.txt", bytes.Repeat([]byte("x"), 1001))
	if res := h.run("send_file", map[string]string{"path": "big.txt"}); !res.IsError || !strings.Contains(res.ForLLM, "larger than the 1 KB limit") {
		t.Fatalf("send_file of 1001 bytes with a 1000-byte limit = %+v", res)
	}
	h.write("ok.txt", []byte("fine"))
	if res := h.run("send_file", map[string]string{"path": "ok.txt", "caption": strings.Repeat("é", 1025)}); !res.IsError || !strings.Contains(res.ForLLM, "at most 1024") {
		t.Fatalf("send_file with a 1025-character caption = %+v", res)
	}
	if res := h.run("send_file", map[string]string{"path": "nope.txt"}); !res.IsError || !strings.Contains(res.ForLLM, "does not exist") {
		t.Fatalf("send_file of a missing file = %+v", res)
	}
	h.queue.err = errDown
	if res := h.run("send_file", map[string]string{"path": "ok.txt"}); !res.IsError || !strings.Contains(res.ForLLM, "try again later") {
		t.Fatalf("send_file with the outbox down = %+v", res)
	}
	h.noRows()
}

// TestMediaToolsStayInTheWorkspace: every tool that takes a path refuses
// one leading out of the caller's workspace, into another conversation's,
// or to a denied path, and nothing is stored, queued or read.
func TestMediaToolsStayInTheWorkspace(t *testing.T) {
	h := newHarness(t, 1_000_000, nil)
	secret := filepath.Join(h.outside, "secret.png")
	if err := os.WriteFile(secret, pngBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(h.ws, "link.png")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(h.outside, filepath.Join(h.ws, "out")); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(h.root, "another-conversation")
	if err := os.MkdirAll(other, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "theirs.png"), pngBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	h.write(".env", []byte("TOKEN=hunter2"))
	rel, _ := filepath.Rel(h.ws, secret)
	paths := []string{"../../etc/passwd", "/etc/passwd", rel, secret, "link.png", "out/secret.png",
		filepath.Join(other, "theirs.png"), "../another-conversation/theirs.png", ".env", "a\x00b"}
	for _, tool := range []string{"send_file", "read_image", "read_audio", "read_document", "read_video"} {
		for _, p := range paths {
			res := h.run(tool, map[string]string{"path": p})
			if !res.IsError {
				t.Errorf("%s %q = %q, want it refused", tool, p, res.ForLLM)
			}
			if strings.Contains(res.ForLLM, "hunter2") || strings.Contains(res.ForLLM, "DISK FULL") {
				t.Errorf("%s %q read the file: %q", tool, p, res.ForLLM)
			}
		}
	}
	if len(h.queue.rows) != 0 || len(h.fakes.seen) != 0 || len(h.fakes.heard) != 0 {
		t.Fatalf("a refused path reached the chat or a model: %d rows, %d images, %d sounds", len(h.queue.rows), len(h.fakes.seen), len(h.fakes.heard))
	}
	if rows, objects := stored(t, h.db); rows != 0 || objects != 0 {
		t.Fatalf("a refused path was stored: %d rows, %d objects", rows, objects)
	}
	if entries, _ := os.ReadDir(h.outside); len(entries) != 1 {
		t.Fatalf("the directory outside the workspace changed: %v", entries)
	}
	res := h.run("send_file", map[string]string{"path": "../../etc/passwd"})
	if !strings.Contains(res.ForLLM, "outside the workspace") {
		t.Fatalf("the refusal does not say why: %q", res.ForLLM)
	}
}
