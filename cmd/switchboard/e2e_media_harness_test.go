package main

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
)

// mediaConfig lets the agent use the media tools without asking:
// create_image and tts are network class, send_file mutating, both asked
// by default.
const mediaConfig = "tools:\n  approvals: {network: allow, mutating: allow}\n"

// withMediaModels turns on vision and points media.transcription, .images
// and .tts at the fake LLM (their base_url defaults to llm.base_url).
func withMediaModels(env map[string]string) {
	env["SWITCHBOARD_LLM_VISION"] = "true"
	env["SWITCHBOARD_MEDIA_TRANSCRIPTION_MODEL"] = "whisper-1"
	env["SWITCHBOARD_MEDIA_IMAGES_MODEL"] = "gpt-image-1"
	env["SWITCHBOARD_MEDIA_TTS_MODEL"] = "tts-1"
}

// pngOf is a real w×h PNG of one colour, so decoders and sniffers take it
// as a person's picture.
func pngOf(t *testing.T, w, h int, c color.RGBA) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// modelCallsWith returns the model calls whose last user message contains
// s: the calls that answered that message.
func modelCallsWith(llm *llmtest.Server, s string) []llmtest.Request {
	var out []llmtest.Request
	for _, r := range llm.Requests() {
		for i := len(r.Messages) - 1; i >= 0; i-- {
			if m := r.Messages[i]; m.Role == "user" {
				if strings.Contains(m.Content, s) {
					out = append(out, r)
				}
				break
			}
		}
	}
	return out
}

// userMessageWith returns the user message containing s that the model
// was last shown, and whether there was one.
func userMessageWith(llm *llmtest.Server, s string) (llmtest.Message, bool) {
	var found llmtest.Message
	ok := false
	for _, r := range llm.Requests() {
		for _, m := range r.Messages {
			if m.Role == "user" && strings.Contains(m.Content, s) {
				found, ok = m, true
			}
		}
	}
	return found, ok
}

// openDB connects to the daemon's PostgreSQL for the test's own checks,
// closed when the test ends.
func openDB(ctx context.Context, t *testing.T, dbURL string) *pgx.Conn {
	t.Helper()
	db, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close(context.WithoutCancel(ctx)) })
	return db
}

// outboxFileRows counts the outbox rows to chat that send a file.
func outboxFileRows(ctx context.Context, t *testing.T, dbURL, chat string) int {
	t.Helper()
	var n int
	err := openDB(ctx, t, dbURL).QueryRow(ctx, `SELECT count(*) FROM outbox WHERE chat_id = $1 AND file IS NOT NULL`, chat).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
