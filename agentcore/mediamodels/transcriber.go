package mediamodels

import (
	"context"
	"io"
	"mime"
	"path/filepath"

	"github.com/openai/openai-go/v3"
)

// Transcriber turns speech into text through POST {base_url}/audio/transcriptions
// (OpenAI, Groq, whisper.cpp and faster-whisper servers speak it).
type Transcriber struct {
	c   client
	sdk openai.AudioTranscriptionService
}

// NewTranscriber returns a Transcriber for s (Config "media.transcription"
// when empty).
func NewTranscriber(s Service) *Transcriber {
	if s.Config == "" {
		s.Config = "media.transcription"
	}
	c := newClient(s)
	return &Transcriber{c: c, sdk: openai.NewAudioTranscriptionService(c.api.Options()...)}
}

// Transcribe returns the text spoken in audio, a file called name: the
// server tells formats apart by its extension.
func (t *Transcriber) Transcribe(ctx context.Context, name string, audio io.Reader) (string, error) {
	if t == nil {
		return "", (*client)(nil).ready("media.transcription")
	}
	if err := t.c.ready(t.c.svc.Config); err != nil {
		return "", err
	}
	typ := mime.TypeByExtension(filepath.Ext(name))
	if typ == "" {
		typ = "application/octet-stream"
	}
	resp, err := t.sdk.New(ctx, openai.AudioTranscriptionNewParams{
		File:  openai.File(audio, filepath.Base(name), typ),
		Model: openai.AudioModel(t.c.svc.Model),
	})
	if err != nil {
		return "", t.c.fail(ctx, "transcribing "+filepath.Base(name), err)
	}
	if !resp.JSON.Text.Valid() {
		return "", t.c.garbage("transcribing "+filepath.Base(name), "has no text")
	}
	return resp.Text, nil
}
