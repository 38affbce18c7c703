package agentcore

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// shotMessages are n user messages with one picture each, answered by the
// assistant in between, as a long chat stores them.
func shotMessages(pics [][]byte) []Message {
	var msgs []Message
	for i, pic := range pics {
		msgs = append(msgs,
			Message{Role: RoleUser, Content: fmt.Sprintf("[attachment: inbox/s%d.png, image/png, 1 KB]", i+1), Images: []Image{{SHA256: fmt.Sprint(i), Type: "image/png", Data: pic}}},
			Message{Role: RoleAssistant, Content: "seen"})
	}
	return msgs
}

// shownShots reports which messages of msgs still carry a picture, and
// fails unless each of the others names it in a note.
func shownShots(t *testing.T, msgs []Message) (shown []int) {
	t.Helper()
	for i, m := range msgs {
		if m.Role != RoleUser {
			continue
		}
		n := i/2 + 1
		if len(m.Images) == 1 && m.Images[0].Data != nil {
			shown = append(shown, n)
			continue
		}
		if note := fmt.Sprintf("[image inbox/s%d.png not shown again; read_image reads it]", n); !strings.Contains(m.Content, note) {
			t.Errorf("message %d: %q lacks %q", n, m.Content, note)
		}
	}
	return shown
}

// The images of one request stay within the provider's byte budget, the
// newest kept.
func TestFitRequestImagesKeepsTheNewestWithinTheByteBudget(t *testing.T) {
	pic := noisePNG(t, 40, 40)
	msgs := shotMessages([][]byte{pic, pic, pic, pic})
	lim := imageLimits{maxBytes: 1 << 20, fitEdge: 2048, maxImages: 100, maxRequestBytes: 2*len(pic) + len(pic)/2}

	out := fitRequestImages(msgs, lim)
	if got := fmt.Sprint(shownShots(t, out)); got != "[3 4]" {
		t.Errorf("shown %s, want [3 4]", got)
	}
	if !bytes.Equal(out[6].Images[0].Data, pic) {
		t.Error("the newest picture was not sent as it is")
	}
	if msgs[0].Images[0].Data == nil || strings.Contains(msgs[0].Content, "not shown") {
		t.Error("fitRequestImages changed the caller's messages")
	}
}

// No more images than the provider takes in one request are sent.
func TestFitRequestImagesKeepsTheNewestWithinTheImageCount(t *testing.T) {
	pic := noisePNG(t, 8, 8)
	lim := imageLimits{maxBytes: 1 << 20, fitEdge: 2048, maxImages: 3, maxRequestBytes: 1 << 30}
	if got := fmt.Sprint(shownShots(t, fitRequestImages(shotMessages([][]byte{pic, pic, pic, pic, pic}), lim))); got != "[3 4 5]" {
		t.Errorf("shown %s, want [3 4 5]", got)
	}
}

// The providers' limits keep the newest image always sendable, and keep
// Anthropic requests at 20 images or fewer, past which it refuses any
// image over 2000 px.
func TestProviderImageLimitsHold(t *testing.T) {
	for name, lim := range map[string]imageLimits{"anthropic": anthropicImageLimits, "openai": openAIImageLimits} {
		if lim.maxBytes > lim.maxRequestBytes || lim.maxImages < maxImagesPerCall {
			t.Errorf("%s: %+v cannot send the newest image or %d images", name, lim, maxImagesPerCall)
		}
	}
	if anthropicImageLimits.maxImages > 20 {
		t.Errorf("anthropic takes %d images a request, want at most 20", anthropicImageLimits.maxImages)
	}
}
