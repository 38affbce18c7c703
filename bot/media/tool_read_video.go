package media

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/switchboard-chat/switchboard/tools"
)

// ReadVideo is the read_video tool: a video of the workspace, as the
// transcript of its sound and what a few of its frames show (ffmpeg,
// media.transcription and media.vision).
type ReadVideo struct{ t *mediaTools }

// Name implements tools.Tool.
func (*ReadVideo) Name() string { return "read_video" }

// Description implements tools.Tool.
func (*ReadVideo) Description() string {
	return fmt.Sprintf("Watch a video file in this conversation's workspace (a video someone sent is at inbox/<name>): "+
		"returns the transcript of its sound and a description of %d frames spread over it.", videoFrames)
}

// Parameters implements tools.Tool.
func (*ReadVideo) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"path":{"type":"string","description":"Video path relative to the workspace, e.g. inbox/clip.mp4."}},` +
		`"required":["path"],"additionalProperties":false}`)
}

// SideEffect implements tools.Tool.
func (*ReadVideo) SideEffect() tools.SideEffect { return tools.SideEffectReadOnly }

// Execute implements tools.Tool.
func (r *ReadVideo) Execute(ctx context.Context, raw json.RawMessage) tools.Result {
	var a struct{ Path string }
	if err := decodeArgs(raw, &a, `{"path": "inbox/clip.mp4"}`); err != nil {
		return tools.ErrorResult(err.Error())
	}
	o := r.t.o
	if o.Transcriber == nil && o.Vision == nil {
		return tools.ErrorResult("neither a transcription nor a vision model is configured: set media.transcription.model and media.vision.model")
	}
	ffmpeg, ffprobe, err := ffmpegTools()
	if err != nil {
		return tools.ErrorResult(err.Error())
	}
	f, err := r.t.open(ctx, a.Path)
	if err != nil {
		return tools.ErrorResult(err.Error())
	}
	defer f.Close()
	if !isSound(f.typ) {
		return tools.ErrorResult(fmt.Sprintf("%s is not a video; read_document reads documents, read_image pictures", f.describe()))
	}
	info, err := probeVideo(ctx, ffprobe, f.File)
	if err != nil {
		return tools.ErrorResult(fmt.Sprintf("%s: %v", f.describe(), err))
	}
	var b strings.Builder
	b.WriteString(f.describe())
	if info.Duration > 0 {
		fmt.Fprintf(&b, ", %s long", clock(info.Duration))
	}
	b.WriteString("\n\nsound: ")
	b.WriteString(r.sound(ctx, ffmpeg, f, info))
	r.frames(ctx, ffmpeg, f, info, &b)
	return tools.Result{ForLLM: b.String()}
}

// sound returns the transcript of f's sound, or why there is none.
func (r *ReadVideo) sound(ctx context.Context, ffmpeg string, f *workspaceFile, info videoInfo) string {
	switch {
	case !info.HasAudio:
		return "(the video has no sound track)"
	case r.t.o.Transcriber == nil:
		return "(not transcribed: " + errNoTranscriber + ")"
	}
	maxBytes := int64(maxSoundBytes)
	if m := r.t.o.MaxBytes; m > 0 {
		maxBytes = min(maxBytes, m)
	}
	var text string
	cut, err := videoSound(ctx, ffmpeg, f.File, maxBytes, func(audio io.Reader) error {
		var err error
		text, err = r.t.transcribe(ctx, "sound.ogg", audio)
		return err
	})
	if err != nil {
		return "(unavailable: " + err.Error() + ")"
	}
	if cut {
		text += "\n(only the first part: the sound is longer than one transcription takes)"
	}
	return text
}

// frames writes what each of a few frames of f shows.
func (r *ReadVideo) frames(ctx context.Context, ffmpeg string, f *workspaceFile, info videoInfo, b *strings.Builder) {
	switch {
	case !info.HasVideo:
		b.WriteString("\n\n(no picture: the file has sound only)")
		return
	case r.t.o.Vision == nil:
		b.WriteString("\n\n(frames not read: no vision model is configured: set media.vision.model)")
		return
	}
	n := videoFrames
	if info.Duration <= 0 {
		n = 1 // the length is unknown: the first frame only
	}
	for i := range n {
		at := info.Duration * (float64(i) + 0.5) / float64(n)
		fmt.Fprintf(b, "\n\nframe at %s: ", clock(at))
		frame, err := videoFrame(ctx, ffmpeg, f.File, at)
		if err == nil && len(frame) == 0 {
			err = errors.New("no frame there")
		}
		if err != nil {
			fmt.Fprintf(b, "(unavailable: %v)", err)
			continue
		}
		prompt := fmt.Sprintf("This is the frame at %s of a video. Describe what it shows, and write out any text in it exactly.", clock(at))
		answer, err := r.t.o.Vision.ReadImage(ctx, "image/jpeg", frame, prompt)
		if err != nil {
			fmt.Fprintf(b, "(unavailable: %s)", serviceError("vision model", "media.vision", err))
			continue
		}
		b.WriteString(answer)
	}
}
