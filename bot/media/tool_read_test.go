package media_test

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/bot/media"
	"github.com/switchboard-chat/switchboard/bot/media/mediatest"
)

func TestMediaReadDocumentToolPDFPages(t *testing.T) {
	needTool(t, "pdftotext", "poppler-utils")
	h := newHarness(t, 1_000_000, nil)
	h.write("inbox/report.pdf", mediatest.MinimalPDF("Revenue grew", "Costs fell", "Outlook stable"))
	res := h.run("read_document", map[string]string{"path": "inbox/report.pdf", "pages": "2-3"})
	if res.IsError || !strings.Contains(res.ForLLM, "[page 2]\nCosts fell") || !strings.Contains(res.ForLLM, "[page 3]\nOutlook stable") || strings.Contains(res.ForLLM, "Revenue") {
		t.Fatalf("read_document pages 2-3 = %+v", res)
	}
	if res := h.run("read_document", map[string]string{"path": "inbox/report.pdf", "pages": "3-2"}); !res.IsError || !strings.Contains(res.ForLLM, `pass one page ("3")`) {
		t.Fatalf("read_document pages 3-2 = %+v", res)
	}
}

// TestMediaReadDocumentToolReadsOn: a long text comes DocumentLimit
// characters at a time, each answer saying how to read on, until all of
// it was read.
func TestMediaReadDocumentToolReadsOn(t *testing.T) {
	h := newHarness(t, 1_000_000, nil)
	var text strings.Builder
	for i := 0; text.Len() < 2*media.DocumentLimit+500; i++ {
		text.WriteString("2026-01-01 line ")
		text.WriteString(strings.Repeat("x", i%50))
		text.WriteString("\n")
	}
	h.write("inbox/app.log", []byte(text.String()))
	args := map[string]any{"path": "inbox/app.log"}
	var got strings.Builder
	for calls := 1; ; calls++ {
		res := h.run("read_document", args)
		if res.IsError || calls > 3 {
			t.Fatalf("call %d: %+v", calls, res)
		}
		body := strings.TrimPrefix(res.ForLLM, res.ForLLM[:strings.Index(res.ForLLM, ":\n")+2])
		next, hasMore := strings.CutPrefix(body[strings.LastIndex(body, "\n")+1:], "[more: read on with read_document ")
		if !hasMore {
			got.WriteString(body)
			if calls != 3 {
				t.Fatalf("read the log in %d calls, want 3", calls)
			}
			break
		}
		got.WriteString(body[:strings.LastIndex(body, "\n")])
		args = map[string]any{}
		if err := json.Unmarshal([]byte(strings.TrimSuffix(next, "]")), &args); err != nil {
			t.Fatalf("the way to read on %q is not JSON arguments: %v", next, err)
		}
	}
	if got.String() != text.String() {
		t.Fatalf("reading on gave %d characters that differ from the log's %d", got.Len(), text.Len())
	}
	h.write("inbox/pic.png", pngBytes)
	if res := h.run("read_document", map[string]string{"path": "inbox/pic.png"}); !res.IsError || !strings.Contains(res.ForLLM, "read it with read_image") {
		t.Fatalf("read_document of a PNG = %+v", res)
	}
}

// makeVideo writes a 2-second test video with a tone into the workspace.
func makeVideo(t *testing.T, h *harness, rel string, sound bool) {
	t.Helper()
	args := []string{"-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=duration=2:size=160x120:rate=10"}
	if sound {
		args = append(args, "-f", "lavfi", "-i", "sine=frequency=440:duration=2", "-c:a", "aac")
	}
	args = append(args, "-c:v", "mpeg4", "-shortest", filepath.Join(h.ws, rel))
	h.write(rel, nil)
	if out, err := exec.Command("ffmpeg", args...).CombinedOutput(); err != nil {
		t.Fatalf("make a test video: %v\n%s", err, out)
	}
}

func TestMediaReadVideo(t *testing.T) {
	needTool(t, "ffmpeg", "ffmpeg")
	h := newHarness(t, 1_000_000, nil)
	makeVideo(t, h, "inbox/clip.mp4", true)
	res := h.run("read_video", map[string]string{"path": "inbox/clip.mp4"})
	if res.IsError || !strings.Contains(res.ForLLM, "0:02 long") || !strings.Contains(res.ForLLM, "sound: the deploy is done") ||
		strings.Count(res.ForLLM, "DISK FULL") != 4 || !strings.Contains(res.ForLLM, "frame at 0:00: ") {
		t.Fatalf("read_video = %s", res.ForLLM)
	}
	if len(h.fakes.heard) != 1 || !bytes.HasPrefix(h.fakes.heard[0], []byte("OggS")) || h.fakes.names[0] != "sound.ogg" {
		t.Fatalf("the transcriber got %d sounds named %q", len(h.fakes.heard), h.fakes.names)
	}
	if len(h.fakes.seen) != 4 {
		t.Fatalf("the vision model got %d frames, want 4", len(h.fakes.seen))
	}
	for i, frame := range h.fakes.seen {
		if !bytes.HasPrefix(frame, []byte{0xFF, 0xD8}) || h.fakes.types[i] != "image/jpeg" {
			t.Fatalf("frame %d is not a JPEG (%s, % x…)", i, h.fakes.types[i], frame[:min(4, len(frame))])
		}
	}

	silent := newHarness(t, 1_000_000, func(o *media.ToolOptions) { o.Vision = nil })
	makeVideo(t, silent, "inbox/silent.mp4", false)
	res = silent.run("read_video", map[string]string{"path": "inbox/silent.mp4"})
	if res.IsError || !strings.Contains(res.ForLLM, "no sound track") || !strings.Contains(res.ForLLM, "set media.vision.model") {
		t.Fatalf("read_video of a silent video without vision = %s", res.ForLLM)
	}
	silent.write("inbox/fake.mp4", append([]byte("\x00\x00\x00\x18ftypmp42"), bytes.Repeat([]byte{1}, 100)...))
	if res := silent.run("read_video", map[string]string{"path": "inbox/fake.mp4"}); !res.IsError || !strings.Contains(res.ForLLM, "cannot be read") {
		t.Fatalf("read_video of a broken MP4 = %+v", res)
	}
}
