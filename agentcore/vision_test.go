package agentcore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// imageStore is an ImageLoader over a map, counting loads.
type imageStore struct {
	files map[string][]byte
	types map[string]string
	loads int
}

func (s *imageStore) LoadImage(_ context.Context, sha string) (string, []byte, error) {
	s.loads++
	data, ok := s.files[sha]
	if !ok {
		return "", nil, errors.New("no such media")
	}
	return s.types[sha], data, nil
}

// add stores data and returns the reference a user message carries.
func (s *imageStore) add(typ string, data []byte) agentcore.Image {
	sum := sha256.Sum256(data)
	key := hex.EncodeToString(sum[:])
	if s.files == nil {
		s.files, s.types = map[string][]byte{}, map[string]string{}
	}
	s.files[key], s.types[key] = data, typ
	return agentcore.Image{SHA256: key, Type: typ}
}

// testPNG draws a w×h PNG with a colour gradient, so scaling it changes
// its bytes.
func testPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			img.Set(x, y, color.RGBA{R: uint8(x), G: uint8(y), B: 128, A: 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// photoMessage is a user message with one picture, as the bot writes it.
func photoMessage(im agentcore.Image, id string) *agentcore.Message {
	return &agentcore.Message{
		Content:    "what is this?\n[attachment: inbox/shot.png, " + im.Type + ", 1 KB]",
		ExternalID: id, Images: []agentcore.Image{im},
	}
}

// openAIVisionAgent is an agent with vision on the fake OpenAI server,
// loading pictures from a store of its own.
func openAIVisionAgent(t *testing.T) (*agentcore.Agent, *llmtest.Server, *imageStore) {
	llm := llmtest.NewServer()
	t.Cleanup(llm.Close)
	store := &imageStore{}
	a := newAgent(t, llm, pgtest.Open(t, context.Background()))
	a.Vision, a.Images = true, store
	return a, llm, store
}

func TestVisionOpenAIGetsTheExactBytes(t *testing.T) {
	ctx := context.Background()
	a, llm, store := openAIVisionAgent(t)
	pic := testPNG(t, 40, 30)

	if _, err := a.Run(ctx, agentcore.RunInput{Session: "a/v:1", User: photoMessage(store.add("image/png", pic), "u1")}); err != nil {
		t.Fatal(err)
	}
	reqs := llm.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	user := reqs[0].Messages[len(reqs[0].Messages)-1]
	if len(user.Images) != 1 || user.Images[0].Type != "image/png" || !bytes.Equal(user.Images[0].Data, pic) {
		t.Fatalf("the model got images %+v, want the stored PNG's %d bytes", user.Images, len(pic))
	}
	if !strings.Contains(user.Content, "[attachment: inbox/shot.png") {
		t.Errorf("text part %q lost the attachment line", user.Content)
	}
	// The bytes are loaded per request, not kept: a second run loads again.
	if _, err := a.Run(ctx, agentcore.RunInput{Session: "a/v:1", User: &agentcore.Message{Content: "and now?", ExternalID: "u2"}}); err != nil {
		t.Fatal(err)
	}
	if store.loads != 2 {
		t.Errorf("%d loads over two runs, want 2 (one per model call)", store.loads)
	}
	if got := llm.Requests()[1].Messages[1].Images; len(got) != 1 || !bytes.Equal(got[0].Data, pic) {
		t.Errorf("the second call's history lost the image: %+v", got)
	}
}

func TestVisionOffSendsNoImage(t *testing.T) {
	ctx := context.Background()
	a, llm, store := openAIVisionAgent(t)
	a.Vision = false // the loader stays

	if _, err := a.Run(ctx, agentcore.RunInput{Session: "a/v:2", User: photoMessage(store.add("image/png", testPNG(t, 4, 4)), "u1")}); err != nil {
		t.Fatal(err)
	}
	req := llm.Requests()[0]
	if user := req.Messages[len(req.Messages)-1]; len(user.Images) != 0 || !strings.Contains(user.Content, "inbox/shot.png") {
		t.Errorf("vision off: message %+v, want the attachment line and no image", user)
	}
	if strings.Contains(string(req.Body), "image_url") || store.loads != 0 {
		t.Errorf("vision off: body has an image part or %d loads happened: %s", store.loads, req.Body)
	}
}

func TestVisionUnreadableImageBecomesANote(t *testing.T) {
	ctx := context.Background()
	a, llm, store := openAIVisionAgent(t)
	fake := store.add("image/png", append([]byte("\x89PNG\r\n\x1a\n"), "#!/bin/sh\nrm -rf /\n"...))
	gone := agentcore.Image{SHA256: strings.Repeat("0", 64), Type: "image/jpeg"}
	msg := &agentcore.Message{
		Content:    "two\n[attachment: inbox/a.png, image/png, 30 bytes]\n[attachment: inbox/b.jpg, image/jpeg, 2 KB]",
		ExternalID: "u1", Images: []agentcore.Image{fake, gone},
	}
	res, err := a.Run(ctx, agentcore.RunInput{Session: "a/v:3", User: msg})
	if err != nil || res.Text == "" {
		t.Fatalf("run = %+v, %v; want a reply despite the bad images", res, err)
	}
	user := llm.Requests()[0].Messages[1]
	if len(user.Images) != 0 {
		t.Errorf("images sent: %+v", user.Images)
	}
	for _, note := range []string{"[image inbox/a.png could not be read]", "[image inbox/b.jpg could not be read]"} {
		if !strings.Contains(user.Content, note) {
			t.Errorf("text %q lacks %q", user.Content, note)
		}
	}
}

// anthropicImages returns the image blocks of the last user turn of body.
func anthropicImages(t *testing.T, body map[string]any) (types []string, data [][]byte, text string) {
	t.Helper()
	msgs := body["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)
	for _, b := range last["content"].([]any) {
		block := b.(map[string]any)
		switch block["type"] {
		case "image":
			src := block["source"].(map[string]any)
			if src["type"] != "base64" {
				t.Fatalf("image source %v, want base64", src)
			}
			raw, err := base64.StdEncoding.DecodeString(src["data"].(string))
			if err != nil {
				t.Fatal(err)
			}
			types, data = append(types, src["media_type"].(string)), append(data, raw)
		case "text":
			text += block["text"].(string)
		}
	}
	return types, data, text
}

func anthropicVisionAgent(t *testing.T, s *anthServer, store *imageStore) *agentcore.Agent {
	llm := llmtest.NewServer()
	t.Cleanup(llm.Close)
	a := newAgent(t, llm, pgtest.Open(t, context.Background()))
	a.Provider = newAnthropicTest(s, agentcore.AnthropicOptions{})
	a.Vision, a.Images = true, store
	return a
}

func TestVisionAnthropicGetsTheExactBytes(t *testing.T) {
	s := newAnthServer(t, anthReply{body: anthMessage("end_turn", map[string]any{"type": "text", "text": "a cat"})})
	store := &imageStore{}
	pic := testPNG(t, 20, 10)
	a := anthropicVisionAgent(t, s, store)
	if _, err := a.Run(context.Background(), agentcore.RunInput{Session: "a/v:4", User: photoMessage(store.add("image/png", pic), "u1")}); err != nil {
		t.Fatal(err)
	}
	types, data, text := anthropicImages(t, s.requests()[0])
	if len(data) != 1 || types[0] != "image/png" || !bytes.Equal(data[0], pic) {
		t.Fatalf("the model got %v images, want the stored PNG", types)
	}
	if !strings.Contains(text, "what is this?") {
		t.Errorf("text block %q", text)
	}
}

func TestVisionAnthropicResizesAWidePicture(t *testing.T) {
	s := newAnthServer(t, anthReply{body: anthMessage("end_turn", map[string]any{"type": "text", "text": "a stripe"})})
	store := &imageStore{}
	a := anthropicVisionAgent(t, s, store)
	wide := testPNG(t, 9000, 100)
	if _, err := a.Run(context.Background(), agentcore.RunInput{Session: "a/v:5", User: photoMessage(store.add("image/png", wide), "u1")}); err != nil {
		t.Fatal(err)
	}
	types, data, _ := anthropicImages(t, s.requests()[0])
	if len(data) != 1 || types[0] != "image/jpeg" {
		t.Fatalf("got %v, want one re-encoded JPEG", types)
	}
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(data[0]))
	if err != nil {
		t.Fatalf("the resized image does not decode as the JPEG it claims to be: %v", err)
	}
	if cfg.Width != 1568 || cfg.Height != 17 || len(data[0]) > 5<<20/4*3 {
		t.Errorf("resized to %dx%d, %d bytes; want 1568x17 under 3.75 MB", cfg.Width, cfg.Height, len(data[0]))
	}
}
