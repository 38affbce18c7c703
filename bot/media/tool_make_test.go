package media_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/bot/media"
	"github.com/switchboard-chat/switchboard/channels"
)

func TestMediaCreateImageSendsAPhoto(t *testing.T) {
	h := newHarness(t, 1_000_000, nil)
	res := h.run("create_image", map[string]string{"prompt": "a lighthouse at dusk", "size": "1024x1024"})
	if res.IsError || !strings.HasPrefix(res.ForLLM, "sent image.png (") {
		t.Fatalf("create_image = %+v", res)
	}
	row := h.oneRow()
	if f := row.File; f.Kind != channels.KindPhoto || f.Type != "image/png" || f.Name != "image.png" || f.Size != int64(len(pngBytes)) {
		t.Fatalf("create_image queued %+v, want a PNG photo", f)
	}
	if got := h.content(row.File.SHA256); !bytes.Equal(got, pngBytes) {
		t.Fatal("the stored image is not what the image model drew")
	}
}

func TestMediaCreateImageCappedAndChecked(t *testing.T) {
	h := newHarness(t, 100, nil)
	res := h.run("create_image", map[string]string{"prompt": "a lighthouse"})
	if !res.IsError || !strings.Contains(res.ForLLM, "too large") || !strings.Contains(res.ForLLM, "100 bytes") {
		t.Fatalf("create_image of %d bytes with a 100-byte limit = %+v", len(pngBytes), res)
	}
	h = newHarness(t, 1_000_000, nil)
	h.fakes.image = []byte("<html>quota exceeded</html>")
	if res := h.run("create_image", map[string]string{"prompt": "a lighthouse"}); !res.IsError || !strings.Contains(res.ForLLM, "text/html, not a picture") {
		t.Fatalf("create_image answered with HTML = %+v", res)
	}
	if res := h.run("create_image", map[string]string{"prompt": "x", "size": "huge"}); !res.IsError || !strings.Contains(res.ForLLM, "WIDTHxHEIGHT") {
		t.Fatalf("create_image size huge = %+v", res)
	}
	h.fakes.fail = errDown
	if res := h.run("create_image", map[string]string{"prompt": "a lighthouse"}); !res.IsError || !strings.Contains(res.ForLLM, "the image model failed: 502") {
		t.Fatalf("create_image with the server down = %+v", res)
	}
	h.noRows()
	none := newHarness(t, 1_000_000, func(o *media.ToolOptions) { o.Images = nil })
	if res := none.run("create_image", map[string]string{"prompt": "a lighthouse"}); !res.IsError || res.ForLLM != "no image model is configured: set media.images.model" {
		t.Fatalf("create_image without an image model = %+v", res)
	}
}

func TestMediaTTSSendsAVoiceMessage(t *testing.T) {
	h := newHarness(t, 1_000_000, nil)
	if res := h.run("tts", map[string]string{"text": "the deploy is done", "voice": "nova"}); res.IsError {
		t.Fatal(res.ForLLM)
	}
	row := h.oneRow()
	if f := row.File; f.Kind != channels.KindVoice || f.Type != "audio/ogg" || f.Name != "voice.ogg" {
		t.Fatalf("tts queued %+v, want an Ogg voice message", f)
	}
	if got := h.content(row.File.SHA256); !bytes.Equal(got, oggBytes) {
		t.Fatal("the stored voice message is not what the speaker said")
	}

	h = newHarness(t, 1_000_000, nil)
	h.fakes.speech = []byte(`{"error":"bad voice"}`)
	if res := h.run("tts", map[string]string{"text": "hi"}); !res.IsError || !strings.Contains(res.ForLLM, "not audio") {
		t.Fatalf("tts answered with JSON = %+v", res)
	}
	h.fakes.fail = errDown
	if res := h.run("tts", map[string]string{"text": "hi"}); !res.IsError || !strings.Contains(res.ForLLM, "the speech model failed: 502") {
		t.Fatalf("tts with the server down = %+v", res)
	}
	if res := h.run("tts", map[string]string{"text": strings.Repeat("a", 4097)}); !res.IsError {
		t.Fatalf("tts of 4097 characters = %+v", res)
	}
	h.noRows()
}

func TestMediaReadImage(t *testing.T) {
	h := newHarness(t, 1_000_000, nil)
	h.write("inbox/shot.png", pngBytes)
	res := h.run("read_image", map[string]string{"path": "inbox/shot.png", "prompt": "what does the error say?"})
	if res.IsError || !strings.Contains(res.ForLLM, "DISK FULL") || !strings.HasPrefix(res.ForLLM, "inbox/shot.png (image/png, ") {
		t.Fatalf("read_image = %+v", res)
	}
	if len(h.fakes.seen) != 1 || !bytes.Equal(h.fakes.seen[0], pngBytes) || h.fakes.types[0] != "image/png" || h.fakes.asked[0] != "what does the error say?" {
		t.Fatalf("the vision model got %d images, types %v, prompts %q", len(h.fakes.seen), h.fakes.types, h.fakes.asked)
	}
	h.write("inbox/notes.png", []byte("#!/bin/sh\necho not a picture\n"))
	if res := h.run("read_image", map[string]string{"path": "inbox/notes.png"}); !res.IsError || !strings.Contains(res.ForLLM, "text/plain") {
		t.Fatalf("read_image of a script named .png = %+v", res)
	}
	h.fakes.fail = errDown
	if res := h.run("read_image", map[string]string{"path": "inbox/shot.png"}); !res.IsError || !strings.Contains(res.ForLLM, "vision model failed") {
		t.Fatalf("read_image with the vision model down = %+v", res)
	}
	none := newHarness(t, 1_000_000, func(o *media.ToolOptions) { o.Vision = nil })
	none.write("inbox/shot.png", pngBytes)
	if res := none.run("read_image", map[string]string{"path": "inbox/shot.png"}); !res.IsError || !strings.HasPrefix(res.ForLLM, "no vision model is configured: set media.vision.model") {
		t.Fatalf("read_image without a vision model = %+v", res)
	}
}

func TestMediaReadAudio(t *testing.T) {
	h := newHarness(t, 1_000_000, nil)
	h.write("inbox/voice", oggBytes)
	res := h.run("read_audio", map[string]string{"path": "inbox/voice"})
	if res.IsError || !strings.Contains(res.ForLLM, "the deploy is done") {
		t.Fatalf("read_audio = %+v", res)
	}
	// The server tells formats apart by the extension: one is added.
	if len(h.fakes.heard) != 1 || !bytes.Equal(h.fakes.heard[0], oggBytes) || h.fakes.names[0] != "voice.ogg" {
		t.Fatalf("the transcriber got %d files named %q", len(h.fakes.heard), h.fakes.names)
	}
	h.write("notes.txt", []byte("plain text"))
	if res := h.run("read_audio", map[string]string{"path": "notes.txt"}); !res.IsError || !strings.Contains(res.ForLLM, "not audio") {
		t.Fatalf("read_audio of text = %+v", res)
	}
	h.fakes.fail = errDown
	if res := h.run("read_audio", map[string]string{"path": "inbox/voice"}); !res.IsError || !strings.Contains(res.ForLLM, "transcription server failed") {
		t.Fatalf("read_audio with the server down = %+v", res)
	}
	none := newHarness(t, 1_000_000, func(o *media.ToolOptions) { o.Transcriber = nil })
	if res := none.run("read_audio", map[string]string{"path": "inbox/voice"}); !res.IsError || res.ForLLM != "no transcription model is configured: set media.transcription.model" {
		t.Fatalf("read_audio without a transcriber = %+v", res)
	}
}
