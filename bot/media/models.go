package media

import (
	"context"
	"errors"
	"io"
)

// The model services media needs beyond the agent's own chat model. Each
// is an OpenAI-compatible endpoint configured under media.* and may be
// absent (nil): what needs it then says plainly that it is not configured.
// agentcore/mediamodels implements them with the official OpenAI SDK.

// Transcriber turns speech into text (media.transcription:
// POST {base_url}/audio/transcriptions).
type Transcriber interface {
	// Transcribe returns the text spoken in audio, a file called name (the
	// server tells formats apart by its extension).
	Transcribe(ctx context.Context, name string, audio io.Reader) (string, error)
}

// ImageReader answers a question about a picture (media.vision), for
// read_image when the agent's own model has no vision.
type ImageReader interface {
	// ReadImage returns the model's answer to prompt about the image of
	// MIME type typ.
	ReadImage(ctx context.Context, typ string, image []byte, prompt string) (string, error)
}

// ImageMaker draws a picture from a prompt (media.images:
// POST {base_url}/images/generations).
type ImageMaker interface {
	// CreateImage returns the image (PNG unless the server says otherwise)
	// for prompt at size ("1024x1024"; "" for the server's default).
	CreateImage(ctx context.Context, prompt, size string) ([]byte, error)
}

// Speaker reads text aloud (media.tts: POST {base_url}/audio/speech).
type Speaker interface {
	// Speak streams text spoken in voice ("" for the configured one) as
	// Ogg Opus, the format of a voice message.
	Speak(ctx context.Context, text, voice string) (io.ReadCloser, error)
}

// ErrNotConfigured is returned for a service that media.* does not set up.
var ErrNotConfigured = errors.New("not configured")
