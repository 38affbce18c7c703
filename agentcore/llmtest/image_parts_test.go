package llmtest_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
)

func postChat(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// An image part is recorded with its decoded bytes; one whose data URL
// does not decode is refused, as the real API refuses it.
func TestImagePartsAreRecorded(t *testing.T) {
	s := newServer(t)
	resp := postChat(t, s.URL(), `{"model":"m","messages":[{"role":"user","content":[
		{"type":"text","text":"what is it?"},
		{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}},
		{"type":"image_url","image_url":{"url":"https://example.com/cat.jpg"}}]}]}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	m := s.Requests()[0].Messages[0]
	if m.Content != "what is it?" || len(m.Images) != 2 {
		t.Fatalf("recorded %+v", m)
	}
	if m.Images[0].Type != "image/png" || !bytes.Equal(m.Images[0].Data, []byte("\x89PNG\r\n\x1a\n")) || m.Images[1].URL != "https://example.com/cat.jpg" {
		t.Errorf("images = %+v", m.Images)
	}
	for _, url := range []string{"data:image/png;base64,***", "data:text/plain;base64,aGk=", "data:image/png,raw"} {
		resp := postChat(t, s.URL(), `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"`+url+`"}}]}]}`)
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", url, resp.StatusCode)
		}
	}
}
