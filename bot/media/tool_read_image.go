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

// maxImageBytes bounds a picture read_image sends to the vision model,
// whatever media.max_bytes allows: providers take about this much.
const maxImageBytes = 20 << 20

// defaultImagePrompt is asked when read_image is given no prompt.
const defaultImagePrompt = "Describe this image in detail, and write out any text in it exactly."

// ReadImage is the read_image tool: a picture of the workspace, read by the
// vision model (media.vision).
type ReadImage struct{ t *mediaTools }

// Name implements tools.Tool.
func (*ReadImage) Name() string { return "read_image" }

// Description implements tools.Tool.
func (*ReadImage) Description() string {
	return "Look at an image file in this conversation's workspace (a photo someone sent is at inbox/<name>) and " +
		"answer a question about it. prompt is the question (default: describe it and transcribe any text)."
}

// Parameters implements tools.Tool.
func (*ReadImage) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"path":{"type":"string","description":"Image path relative to the workspace, e.g. inbox/screenshot.png."},` +
		`"prompt":{"type":"string","description":"What to find out about the image."}},` +
		`"required":["path"],"additionalProperties":false}`)
}

// SideEffect implements tools.Tool.
func (*ReadImage) SideEffect() tools.SideEffect { return tools.SideEffectReadOnly }

// Execute implements tools.Tool.
func (r *ReadImage) Execute(ctx context.Context, raw json.RawMessage) tools.Result {
	var a struct{ Path, Prompt string }
	if err := decodeArgs(raw, &a, `{"path": "inbox/photo.jpg", "prompt"?: "..."}`); err != nil {
		return tools.ErrorResult(err.Error())
	}
	vision := r.t.o.Vision
	if vision == nil {
		return tools.ErrorResult("no vision model is configured: set media.vision.model (or llm.vision for a model that reads images itself)")
	}
	f, err := r.t.open(ctx, a.Path)
	if err != nil {
		return tools.ErrorResult(err.Error())
	}
	defer f.Close()
	if !strings.HasPrefix(f.typ, "image/") {
		return tools.ErrorResult(fmt.Sprintf("%s is not an image; read_document reads documents, read_audio sound", f.describe()))
	}
	if msg, big := r.t.tooBig(f); big || f.info.Size() > maxImageBytes {
		if !big {
			msg = fmt.Sprintf("%s is larger than the %s a vision model takes; make it smaller first", f.describe(), HumanSize(maxImageBytes))
		}
		return tools.ErrorResult(msg)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxImageBytes))
	if err != nil {
		return tools.ErrorResult(fmt.Sprintf("%s cannot be read: %v", a.Path, err))
	}
	prompt := strings.TrimSpace(a.Prompt)
	if prompt == "" {
		prompt = defaultImagePrompt
	}
	answer, err := vision.ReadImage(ctx, f.typ, data, prompt)
	switch {
	case errors.Is(err, ErrNotConfigured):
		return tools.ErrorResult("no vision model is configured: set media.vision.model")
	case err != nil:
		return tools.ErrorResult(serviceError("vision model", "media.vision", err))
	}
	return tools.Result{ForLLM: fmt.Sprintf("%s:\n%s", f.describe(), answer)}
}
