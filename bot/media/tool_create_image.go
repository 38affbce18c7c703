package media

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/tools"
)

// maxImagePrompt bounds create_image's prompt (OpenAI's limit for its
// newest image models).
const maxImagePrompt = 32000

// imageSize is the shape of a size argument: "1024x1024", or "auto".
var imageSize = regexp.MustCompile(`^([1-9][0-9]{1,4}x[1-9][0-9]{1,4}|auto)$`)

// CreateImage is the create_image tool: a picture drawn from a prompt
// (media.images), sent to this chat as a photo.
type CreateImage struct{ t *mediaTools }

// Name implements tools.Tool.
func (*CreateImage) Name() string { return "create_image" }

// Description implements tools.Tool.
func (*CreateImage) Description() string {
	return "Draw a picture from a description and send it to this chat as a photo. prompt describes the picture " +
		`in detail; size is "1024x1024" (default), "1536x1024", "1024x1536" or whatever the image model supports.`
}

// Parameters implements tools.Tool.
func (*CreateImage) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"prompt":{"type":"string","description":"What the picture shows, in detail."},` +
		`"size":{"type":"string","description":"WIDTHxHEIGHT in pixels, e.g. 1024x1024."}},` +
		`"required":["prompt"],"additionalProperties":false}`)
}

// SideEffect implements tools.Tool: it calls an outside image service.
func (*CreateImage) SideEffect() tools.SideEffect { return tools.SideEffectNetwork }

// Execute implements tools.Tool.
func (c *CreateImage) Execute(ctx context.Context, raw json.RawMessage) tools.Result {
	var a struct{ Prompt, Size string }
	if err := decodeArgs(raw, &a, `{"prompt": "...", "size"?: "1024x1024"}`); err != nil {
		return tools.ErrorResult(err.Error())
	}
	a.Prompt, a.Size = strings.TrimSpace(a.Prompt), strings.TrimSpace(a.Size)
	switch {
	case a.Prompt == "":
		return tools.ErrorResult(`missing "prompt": describe the picture to draw`)
	case utf8.RuneCountInString(a.Prompt) > maxImagePrompt:
		return tools.ErrorResult(fmt.Sprintf("prompt is longer than %d characters; describe the picture more briefly", maxImagePrompt))
	case a.Size != "" && !imageSize.MatchString(a.Size):
		return tools.ErrorResult(fmt.Sprintf(`size %q: pass WIDTHxHEIGHT in pixels, e.g. "1024x1024"`, a.Size))
	case c.t.o.Images == nil:
		return tools.ErrorResult("no image model is configured: set media.images.model")
	}
	img, err := c.t.o.Images.CreateImage(ctx, a.Prompt, a.Size)
	switch {
	case errors.Is(err, ErrNotConfigured):
		return tools.ErrorResult("no image model is configured: set media.images.model")
	case err != nil:
		return tools.ErrorResult(serviceError("image model", "media.images", err))
	}
	stored, err := c.t.keep(ctx, channels.Attachment{Kind: channels.KindPhoto, Name: "image", Size: int64(len(img)),
		Open: func(context.Context) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(img)), nil }})
	if err != nil {
		return tools.ErrorResult(err.Error())
	}
	if !photoTypes[stored.Type] {
		return tools.ErrorResult(fmt.Sprintf("the image model answered with %s, not a picture; try again, or ask an admin to check media.images", stored.Type))
	}
	stored.Name = withExt("image", stored.Type)
	done, err := c.t.post(ctx, c.Name(), raw, channels.KindPhoto, stored, "")
	if err != nil {
		return tools.ErrorResult(err.Error())
	}
	return tools.Result{ForLLM: done}
}
