package agentcore

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	_ "image/gif" // decoders image.Decode knows: the types people send
	"image/jpeg"
	_ "image/png"

	_ "golang.org/x/image/bmp"
	"golang.org/x/image/draw"
	_ "golang.org/x/image/webp"
)

// imageLimits are what a provider accepts of one image.
type imageLimits struct {
	maxBytes int // largest encoded image
	maxEdge  int // longest side; 0 means no limit
	fitEdge  int // longest side of an image this package resizes
	// maxImages and maxRequestBytes bound the images of one request: how
	// many, and their bytes in all.
	maxImages       int
	maxRequestBytes int
}

// Anthropic refuses images over 5 MB (counted on the base64 text, so 3.75
// MB of bytes) or with a side over 8000 px, and scales anything with a long
// edge over 1568 px down to that itself, so a resized image is made that
// size. OpenAI takes up to 20 MB and fits images into 2048 px.
//
// Per request, Anthropic takes 100 images, but only at most 2000 px each
// when there are more than 20, and 32 MB of body; OpenAI takes 500 images
// and 50 MB. Images travel as base64 (4/3 of their bytes), so the byte
// budgets leave room for the text, and each is above one image's maxBytes,
// so the newest image always goes.
var (
	anthropicImageLimits = imageLimits{maxBytes: 5 << 20 / 4 * 3, maxEdge: 8000, fitEdge: 1568, maxImages: 20, maxRequestBytes: 20 << 20}
	openAIImageLimits    = imageLimits{maxBytes: 20 << 20, fitEdge: 2048, maxImages: 500, maxRequestBytes: 32 << 20}
)

// maxImagePixels bounds the pictures decoded: a small file can claim a
// huge canvas, and decoding it would take four bytes a pixel.
const maxImagePixels = 60_000_000

// sendableTypes are the formats both providers take as they are. GIF is
// not among them (OpenAI refuses animated ones): it is re-encoded.
var sendableTypes = map[string]string{"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp"}

// minFitEdge is the smallest long side fitImage scales a picture to
// before it gives up on the byte limit.
const minFitEdge = 16

// jpegQuality is the quality of re-encoded images: text in screenshots
// stays legible.
const jpegQuality = 85

// errUnreadableImage is fitImage's error for bytes that are no picture.
var errUnreadableImage = errors.New("not a readable image")

// fitImage returns data (of MIME type typ as stored) as the provider with
// limits lim accepts it: unchanged when it is a PNG, JPEG or WebP within
// the limits, else scaled to fit and re-encoded as JPEG. Bytes that do not
// decode fully, and canvases over maxImagePixels, are refused.
func fitImage(data []byte, lim imageLimits) (typ string, out []byte, err error) {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return "", nil, fmt.Errorf("%w: %w", errUnreadableImage, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width*cfg.Height > maxImagePixels {
		return "", nil, fmt.Errorf("%w: %dx%d px is more than %d pixels", errUnreadableImage, cfg.Width, cfg.Height, maxImagePixels)
	}
	// Decoded in full even when sent as is: a picture whose header is
	// fine but whose body is cut off would make the provider refuse every
	// later request of the session.
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return "", nil, fmt.Errorf("%w: %w", errUnreadableImage, err)
	}
	long := max(cfg.Width, cfg.Height)
	if t, ok := sendableTypes[format]; ok && len(data) <= lim.maxBytes && (lim.maxEdge == 0 || long <= lim.maxEdge) {
		return t, data, nil
	}
	for edge := min(long, lim.fitEdge); ; edge /= 2 {
		out, err := scaledJPEG(img, edge)
		if err != nil {
			return "", nil, err
		}
		if len(out) <= lim.maxBytes {
			return "image/jpeg", out, nil
		}
		if edge <= minFitEdge {
			break
		}
	}
	return "", nil, fmt.Errorf("%w: no size of it fits in %d bytes", errUnreadableImage, lim.maxBytes)
}

// scaledJPEG draws img with its long side edge px on white (JPEG has no
// transparency) and encodes it.
func scaledJPEG(img image.Image, edge int) ([]byte, error) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w >= h {
		w, h = edge, max(1, h*edge/w)
	} else {
		w, h = max(1, w*edge/h), edge
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(dst, dst.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	draw.CatmullRom.Scale(dst, dst.Bounds(), img, b, draw.Over, nil)
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, dst, &jpeg.Options{Quality: jpegQuality}); err != nil {
		return nil, fmt.Errorf("encode resized image: %w", err)
	}
	return buf.Bytes(), nil
}
