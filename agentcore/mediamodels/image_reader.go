package mediamodels

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"strings"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/tools"
)

// ImageReader answers questions about pictures with a chat model that has
// vision (media.vision), for read_image when the agent's own model has
// none. The picture goes as the agent's would: an image_url data URL,
// resized when larger than the API takes.
type ImageReader struct {
	c    client
	chat agentcore.Provider
}

// NewImageReader returns an ImageReader for s (Config "media.vision" when
// empty).
func NewImageReader(s Service) *ImageReader {
	if s.Config == "" {
		s.Config = "media.vision"
	}
	p := agentcore.NewOpenAI(agentcore.OpenAIOptions{
		BaseURL: s.BaseURL, APIKey: s.APIKey, Model: s.Model, HTTPClient: s.HTTPClient, Timeout: s.Timeout, Config: s.Config,
	})
	return &ImageReader{c: newClient(s), chat: p}
}

// defaultPrompt is asked when read_image is given no question.
const defaultPrompt = "Describe this image. Transcribe any text in it exactly."

// ReadImage returns the model's answer to prompt about image, of MIME
// type typ.
func (r *ImageReader) ReadImage(ctx context.Context, typ string, img []byte, prompt string) (string, error) {
	if r == nil {
		return "", (*client)(nil).ready("media.vision")
	}
	if err := r.c.ready(r.c.svc.Config); err != nil {
		return "", err
	}
	// A picture the API cannot be shown is refused here, with a reason,
	// rather than sent as a note the model would answer politely.
	if _, _, err := image.DecodeConfig(bytes.NewReader(img)); err != nil {
		return "", fmt.Errorf("%s: the file is not a picture this daemon can read (PNG, JPEG, GIF, WebP, BMP): %w", r.c.svc.Config, err)
	}
	if strings.TrimSpace(prompt) == "" {
		prompt = defaultPrompt
	}
	metered := meteredCall(ctx, r.c.svc.Model)
	if err := r.admit(ctx, metered); err != nil {
		return "", err
	}
	resp, err := r.chat.Chat(ctx, agentcore.Request{Messages: []agentcore.Message{{
		Role: agentcore.RoleUser, Content: prompt, Images: []agentcore.Image{{Type: typ, Data: img}},
	}}}, nil)
	if err != nil {
		return "", fmt.Errorf("%s: reading the image with model %s at %s failed: %w", r.c.svc.Config, r.c.svc.Model, r.c.api.BaseURL(), err)
	}
	if m := r.c.svc.Meter; m != nil {
		m.Record(ctx, metered, resp.Usage)
	}
	if strings.TrimSpace(resp.Content) == "" {
		return "", r.c.garbage("reading the image", "has no text")
	}
	return resp.Content, nil
}

// meteredCall names the model call a tool call in ctx makes: whose run it
// is, in which chat, for which agent.
func meteredCall(ctx context.Context, model string) agentcore.MeteredCall {
	call, _ := tools.CallFrom(ctx)
	return agentcore.MeteredCall{Session: call.Session, Call: call, Model: model}
}

// admit asks the Meter, if any, whether the model may be called; a budget
// used up is the error the model reads, saying which one.
func (r *ImageReader) admit(ctx context.Context, c agentcore.MeteredCall) error {
	m := r.c.svc.Meter
	if m == nil {
		return nil
	}
	err := m.Admit(ctx, c)
	var refused *agentcore.RefusedError
	switch {
	case errors.As(err, &refused):
		return fmt.Errorf("%s: the image was not read: %s", r.c.svc.Config, refused.Reply)
	case err != nil:
		return fmt.Errorf("%s: could not check the budgets, so the image was not read: %w", r.c.svc.Config, err)
	}
	return nil
}
