package postgres

import (
	"encoding/json"
	"fmt"

	"github.com/switchboard-chat/switchboard/agentcore"
)

// storedImage is one element of messages.images: the media key and type
// of a picture, never its bytes (those stay in media, loaded per request).
type storedImage struct {
	SHA256 string `json:"sha256"`
	Type   string `json:"type"`
}

// encodeImages renders images for the images column; none is NULL.
func encodeImages(images []agentcore.Image) (*string, error) {
	if len(images) == 0 {
		return nil, nil
	}
	stored := make([]storedImage, len(images))
	for i, im := range images {
		stored[i] = storedImage{SHA256: storable(im.SHA256), Type: storable(im.Type)}
	}
	b, err := json.Marshal(stored)
	if err != nil {
		return nil, fmt.Errorf("encode images: %w", err)
	}
	s := string(b)
	return &s, nil
}

// decodeImages reads the images column; NULL is none.
func decodeImages(raw []byte) ([]agentcore.Image, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var stored []storedImage
	if err := json.Unmarshal(raw, &stored); err != nil {
		return nil, fmt.Errorf("decode images: %w", err)
	}
	if len(stored) == 0 {
		return nil, nil
	}
	out := make([]agentcore.Image, len(stored))
	for i, s := range stored {
		out[i] = agentcore.Image{SHA256: s.SHA256, Type: s.Type}
	}
	return out, nil
}
