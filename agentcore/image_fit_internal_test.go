package agentcore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"strings"
	"testing"
)

func noisePNG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = uint8(r.Uint32())
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// An image over the byte limit is scaled down until it fits.
func TestFitImageMeetsTheByteLimit(t *testing.T) {
	pic := noisePNG(t, 300, 200)
	lim := imageLimits{maxBytes: 20_000, fitEdge: 2048}
	typ, out, err := fitImage(pic, lim)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(out))
	if typ != "image/jpeg" || err != nil || len(out) > lim.maxBytes || cfg.Width >= 300 {
		t.Fatalf("fitImage = %s, %d bytes, %dx%d (%v); want a smaller JPEG under %d bytes", typ, len(out), cfg.Width, cfg.Height, err, lim.maxBytes)
	}
	if cfg.Width*2 != cfg.Height*3 {
		t.Errorf("aspect ratio lost: %dx%d", cfg.Width, cfg.Height)
	}
}

// A GIF is re-encoded (OpenAI refuses animated ones), with its size.
func TestFitImageReencodesGIF(t *testing.T) {
	img := image.NewPaletted(image.Rect(0, 0, 10, 6), []color.Color{color.White, color.Black})
	var b bytes.Buffer
	if err := gif.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	typ, out, err := fitImage(b.Bytes(), openAIImageLimits)
	if err != nil || typ != "image/jpeg" {
		t.Fatalf("fitImage(gif) = %s, %v", typ, err)
	}
	if cfg, err := jpeg.DecodeConfig(bytes.NewReader(out)); err != nil || cfg.Width != 10 || cfg.Height != 6 {
		t.Errorf("re-encoded GIF is %+v, %v; want 10x6", cfg, err)
	}
}

// Bytes that are no picture, a picture cut short and a canvas too large
// to decode are refused, not sent.
func TestFitImageRefusesWhatItCannotRead(t *testing.T) {
	whole := noisePNG(t, 50, 50)
	// A PNG header claiming a 100000x100000 canvas.
	var bomb bytes.Buffer
	if err := png.Encode(&bomb, image.NewGray(image.Rect(0, 0, 1, 1))); err != nil {
		t.Fatal(err)
	}
	huge := bomb.Bytes()
	copy(huge[16:24], []byte{0, 1, 0x86, 0xa0, 0, 1, 0x86, 0xa0})
	binary.BigEndian.PutUint32(huge[29:33], crc32.ChecksumIEEE(huge[12:29])) // IHDR's CRC
	for name, data := range map[string][]byte{
		"script":    []byte("#!/bin/sh\necho hi\n"),
		"truncated": whole[:len(whole)/2],
		"bomb":      huge,
	} {
		if _, _, err := fitImage(data, anthropicImageLimits); !errors.Is(err, errUnreadableImage) || name == "bomb" && !strings.Contains(err.Error(), "pixels") {
			t.Errorf("%s: err = %v, want errUnreadableImage", name, err)
		}
	}
}
