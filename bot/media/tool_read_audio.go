package media

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/switchboard-chat/switchboard/tools"
)

// extByType names the extension a transcription server expects for a
// sniffed type, for a file whose name has none.
var extByType = map[string]string{
	"audio/mpeg": ".mp3", "application/ogg": ".ogg", "audio/ogg": ".ogg", "audio/wave": ".wav",
	"audio/aiff": ".aiff", "video/mp4": ".mp4", "video/webm": ".webm", "video/avi": ".avi",
	"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp",
}

// isSound reports whether files of type typ may carry speech.
func isSound(typ string) bool {
	return strings.HasPrefix(typ, "audio/") || strings.HasPrefix(typ, "video/") || typ == "application/ogg"
}

// withExt returns name with the extension of typ when it has none.
func withExt(name, typ string) string {
	if path.Ext(name) == "" {
		return name + extByType[typ]
	}
	return name
}

// ReadAudio is the read_audio tool: speech in a workspace file, as text
// (media.transcription).
type ReadAudio struct{ t *mediaTools }

// Name implements tools.Tool.
func (*ReadAudio) Name() string { return "read_audio" }

// Description implements tools.Tool.
func (*ReadAudio) Description() string {
	return "Transcribe the speech in an audio file (or a video's sound) in this conversation's workspace, " +
		"e.g. a voice note at inbox/<name>. Returns the transcript."
}

// Parameters implements tools.Tool.
func (*ReadAudio) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"path":{"type":"string","description":"Audio path relative to the workspace, e.g. inbox/voice.ogg."}},` +
		`"required":["path"],"additionalProperties":false}`)
}

// SideEffect implements tools.Tool.
func (*ReadAudio) SideEffect() tools.SideEffect { return tools.SideEffectReadOnly }

// Execute implements tools.Tool.
func (r *ReadAudio) Execute(ctx context.Context, raw json.RawMessage) tools.Result {
	var a struct{ Path string }
	if err := decodeArgs(raw, &a, `{"path": "inbox/voice.ogg"}`); err != nil {
		return tools.ErrorResult(err.Error())
	}
	if r.t.o.Transcriber == nil {
		return tools.ErrorResult(errNoTranscriber)
	}
	f, err := r.t.open(ctx, a.Path)
	if err != nil {
		return tools.ErrorResult(err.Error())
	}
	defer f.Close()
	if !isSound(f.typ) {
		return tools.ErrorResult(fmt.Sprintf("%s is not audio; read_document reads documents, read_image pictures", f.describe()))
	}
	if msg, big := r.t.tooBig(f); big {
		return tools.ErrorResult(msg)
	}
	text, err := r.t.transcribe(ctx, withExt(f.name, f.typ), f)
	if err != nil {
		return tools.ErrorResult(err.Error())
	}
	return tools.Result{ForLLM: fmt.Sprintf("transcript of %s:\n%s", f.describe(), text)}
}

// errNoTranscriber says how to turn transcription on.
const errNoTranscriber = "no transcription model is configured: set media.transcription.model"

// transcribe asks the Transcriber; the error is the message for the model.
func (t *mediaTools) transcribe(ctx context.Context, name string, audio io.Reader) (string, error) {
	text, err := t.o.Transcriber.Transcribe(ctx, name, audio)
	switch {
	case errors.Is(err, ErrNotConfigured):
		return "", errors.New(errNoTranscriber)
	case err != nil:
		return "", errors.New(serviceError("transcription server", "media.transcription", err))
	}
	if strings.TrimSpace(text) == "" {
		return "(no speech recognised)", nil
	}
	return text, nil
}
