package agentcore_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
)

// shots is how many pictures the long-chat tests send, one a message;
// the newest eight are shown to the model.
const (
	shots = 12
	shown = 8
)

// shotNote is the note the model reads for the n-th shot once it is no
// longer shown.
func shotNote(n int) string {
	return fmt.Sprintf("[image inbox/shot-%d.png not shown again; read_image reads it]", n)
}

// sendShots runs one user message per picture, as the bot writes it, and
// returns the pictures' bytes, shot n at index n-1.
func sendShots(t *testing.T, a *agentcore.Agent, store *imageStore, session string) [][]byte {
	t.Helper()
	var pics [][]byte
	for n := 1; n <= shots; n++ {
		pic := testPNG(t, 4+n, 4)
		im := store.add("image/png", pic)
		msg := &agentcore.Message{
			Content:    fmt.Sprintf("screenshot %d\n[attachment: inbox/shot-%d.png, image/png, 1 KB]", n, n),
			ExternalID: fmt.Sprintf("u%d", n), Images: []agentcore.Image{im},
		}
		if _, err := a.Run(context.Background(), agentcore.RunInput{Session: session, User: msg}); err != nil {
			t.Fatal(err)
		}
		pics = append(pics, pic)
	}
	return pics
}

// checkShown fails unless the model was shown exactly the newest shots
// (images[n-1] is what the message of shot n carried, texts[n-1] its text)
// and read a note naming each older one.
func checkShown(t *testing.T, pics [][]byte, images [][][]byte, texts []string) {
	t.Helper()
	if len(images) != shots || len(texts) != shots {
		t.Fatalf("the model got %d messages with pictures' text, want %d", len(texts), shots)
	}
	for n := 1; n <= shots; n++ {
		got, text := images[n-1], texts[n-1]
		if n > shots-shown {
			if len(got) != 1 || !bytes.Equal(got[0], pics[n-1]) || strings.Contains(text, "not shown") {
				t.Errorf("shot %d: %d images, text %q; want its own picture and no note", n, len(got), text)
			}
			continue
		}
		if len(got) != 0 || !strings.Contains(text, shotNote(n)) {
			t.Errorf("shot %d: %d images, text %q; want none and the note %q", n, len(got), text, shotNote(n))
		}
		if !strings.Contains(text, fmt.Sprintf("[attachment: inbox/shot-%d.png", n)) {
			t.Errorf("shot %d lost its attachment line: %q", n, text)
		}
	}
}

// openAIShots returns the pictures and texts of the user messages of req
// that are about shots.
func openAIShots(req llmtest.Request) (images [][][]byte, texts []string) {
	for _, m := range req.Messages {
		if m.Role != "user" || !strings.HasPrefix(m.Content, "screenshot ") {
			continue
		}
		var data [][]byte
		for _, im := range m.Images {
			data = append(data, im.Data)
		}
		images, texts = append(images, data), append(texts, m.Content)
	}
	return images, texts
}

func TestVisionLongChatShowsOnlyTheNewestImages(t *testing.T) {
	a, llm, store := openAIVisionAgent(t)
	pics := sendShots(t, a, store, "a/long:1")

	reqs := llm.Requests()
	images, texts := openAIShots(reqs[len(reqs)-1])
	checkShown(t, pics, images, texts)
	if n := strings.Count(string(reqs[len(reqs)-1].Body), `"type":"image_url"`); n != shown {
		t.Errorf("the last request has %d image parts, want %d", n, shown)
	}
	// Pictures left out are not even loaded: the store is read for the
	// shown ones only, 1+2+…+8 and then 8 a call.
	if want := shown*(shown+1)/2 + (shots-shown)*shown; store.loads != want {
		t.Errorf("%d loads over %d calls, want %d", store.loads, shots, want)
	}
}

func TestVisionLongChatReusedToolCallIDsDoNotResendImages(t *testing.T) {
	a, llm, store := openAIVisionAgent(t)
	pics := sendShots(t, a, store, "a/long:2")
	before := len(llm.Requests())
	// Model servers number each reply's calls afresh: two steps both
	// calling "call_0" must not bring older pictures back.
	call := llmtest.ToolCall{ID: "call_0", Name: "datetime", Arguments: "{}"}
	llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{call}}, llmtest.Reply{ToolCalls: []llmtest.ToolCall{call}}, llmtest.Reply{Text: "done"})
	if _, err := a.Run(context.Background(), agentcore.RunInput{Session: "a/long:2", User: &agentcore.Message{Content: "and now?", ExternalID: "u13"}}); err != nil {
		t.Fatal(err)
	}
	reqs := llm.Requests()[before:]
	if len(reqs) != 3 {
		t.Fatalf("%d model calls, want 3", len(reqs))
	}
	for i, req := range reqs {
		images, texts := openAIShots(req)
		t.Run(fmt.Sprint("call ", i+1), func(t *testing.T) { checkShown(t, pics, images, texts) })
	}
}

// anthropicShots returns the pictures and texts of the user turns of body
// that are about shots.
func anthropicShots(t *testing.T, body map[string]any) (images [][][]byte, texts []string) {
	t.Helper()
	for _, raw := range body["messages"].([]any) {
		turn := raw.(map[string]any)
		if turn["role"] != "user" {
			continue
		}
		var data [][]byte
		var text string
		for _, b := range turn["content"].([]any) {
			block := b.(map[string]any)
			switch block["type"] {
			case "image":
				pic, err := base64.StdEncoding.DecodeString(block["source"].(map[string]any)["data"].(string))
				if err != nil {
					t.Fatal(err)
				}
				data = append(data, pic)
			case "text":
				text += block["text"].(string)
			}
		}
		if strings.HasPrefix(text, "screenshot ") {
			images, texts = append(images, data), append(texts, text)
		}
	}
	return images, texts
}

// hugeUsage is an Anthropic reply whose usage is far beyond any real one.
func hugeUsage(stop string, content ...map[string]any) anthReply {
	msg := anthMessage(stop, content...)
	msg["usage"] = map[string]any{"input_tokens": int64(1) << 62, "output_tokens": int64(1) << 62}
	return anthReply{body: msg}
}

func TestVisionAnthropicLongChatShowsOnlyTheNewestImages(t *testing.T) {
	var replies []anthReply
	for range shots {
		replies = append(replies, hugeUsage("end_turn", map[string]any{"type": "text", "text": "seen"}))
	}
	// The same tool_use id twice, with usage numbers no counter expects.
	use := map[string]any{"type": "tool_use", "id": "toolu_1", "name": "datetime", "input": map[string]any{}}
	replies = append(replies, hugeUsage("tool_use", use), hugeUsage("tool_use", use),
		hugeUsage("end_turn", map[string]any{"type": "text", "text": "done"}))
	s := newAnthServer(t, replies...)
	store := &imageStore{}
	a := anthropicVisionAgent(t, s, store)

	pics := sendShots(t, a, store, "a/long:3")
	images, texts := anthropicShots(t, s.requests()[shots-1])
	checkShown(t, pics, images, texts)

	if _, err := a.Run(context.Background(), agentcore.RunInput{Session: "a/long:3", User: &agentcore.Message{Content: "and now?", ExternalID: "u13"}}); err != nil {
		t.Fatal(err)
	}
	after := s.requests()[shots:]
	if len(after) != 3 {
		t.Fatalf("%d model calls, want 3", len(after))
	}
	for i, body := range after {
		images, texts := anthropicShots(t, body)
		t.Run(fmt.Sprint("call ", i+1), func(t *testing.T) { checkShown(t, pics, images, texts) })
	}
}
