package llmtest

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// Image is one image part of a recorded chat message: what the model
// would have been shown.
type Image struct {
	// Type is the MIME type a data URL declares ("image/png"); "" for a
	// URL that is not a data URL.
	Type string
	// Data is the data URL's decoded bytes.
	Data []byte
	// URL is the part's URL when it is not a data URL.
	URL string
}

// parseImageURL reads an image part's URL: a base64 data URL is decoded,
// as the real API does, and one that does not decode fails the request.
func parseImageURL(url string) (Image, error) {
	rest, ok := strings.CutPrefix(url, "data:")
	if !ok {
		if url == "" {
			return Image{}, errors.New("image_url.url is empty")
		}
		return Image{URL: url}, nil
	}
	meta, payload, ok := strings.Cut(rest, ",")
	typ, isBase64 := strings.CutSuffix(meta, ";base64")
	if !ok || !isBase64 || !strings.HasPrefix(typ, "image/") {
		return Image{}, fmt.Errorf("image data URL must be data:image/<type>;base64,<data>, got %.40q", url)
	}
	data, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return Image{}, fmt.Errorf("image data URL is not valid base64: %w", err)
	}
	return Image{Type: typ, Data: data}, nil
}
