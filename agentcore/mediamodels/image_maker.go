package mediamodels

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"

	"github.com/openai/openai-go/v3"
)

// ImageMaker draws pictures through POST {base_url}/images/generations.
type ImageMaker struct {
	c   client
	sdk openai.ImageService
}

// NewImageMaker returns an ImageMaker for s (Config "media.images" when
// empty).
func NewImageMaker(s Service) *ImageMaker {
	if s.Config == "" {
		s.Config = "media.images"
	}
	c := newClient(s)
	return &ImageMaker{c: c, sdk: openai.NewImageService(c.api.Options()...)}
}

// CreateImage returns the picture drawn for prompt at size ("1024x1024";
// "" for the server's default), as the server encoded it (PNG, as a rule).
func (m *ImageMaker) CreateImage(ctx context.Context, prompt, size string) ([]byte, error) {
	if m == nil {
		return nil, (*client)(nil).ready("media.images")
	}
	if err := m.c.ready(m.c.svc.Config); err != nil {
		return nil, err
	}
	params := openai.ImageGenerateParams{
		Prompt:         prompt,
		Model:          openai.ImageModel(m.c.svc.Model),
		N:              openai.Int(1),
		ResponseFormat: openai.ImageGenerateParamsResponseFormatB64JSON,
	}
	if size != "" {
		params.Size = openai.ImageGenerateParamsSize(size)
	}
	resp, err := m.sdk.Generate(ctx, params)
	if err != nil {
		return nil, m.c.fail(ctx, "drawing an image", err)
	}
	if len(resp.Data) == 0 || resp.Data[0].B64JSON == "" {
		return nil, m.c.garbage("drawing an image", "holds no b64_json image")
	}
	data, err := base64.StdEncoding.DecodeString(resp.Data[0].B64JSON)
	if err != nil {
		return nil, m.c.garbage("drawing an image", "holds b64_json that is not base64")
	}
	if _, _, err := image.DecodeConfig(bytes.NewReader(data)); err != nil {
		return nil, m.c.garbage("drawing an image", "holds bytes that are not a picture")
	}
	return data, nil
}
