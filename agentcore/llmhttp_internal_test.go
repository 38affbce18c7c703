package agentcore

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkLLMPost posts a 14 KB request, about what a run with the
// built-in tools sends, to a local HTTP/1.1 server and reads the answer,
// through the transport the providers use. B/op shows what the client
// allocates per call besides the payload it was given (the server, in the
// same process, adds its own).
func BenchmarkLLMPost(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = w.Write([]byte(`{"choices":[]}`))
	}))
	defer srv.Close()
	a := &llmAPI{provider: "openai", baseURL: srv.URL, client: httpClientOr(nil)}
	defer a.client.CloseIdleConnections()
	payload := []byte(`{"model":"m","messages":[{"role":"user","content":"` + string(bytes.Repeat([]byte("x"), 14<<10)) + `"}]}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		c, err := a.post(ctx, "chat/completions", "application/json", payload)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, c.resp.Body)
		c.close()
	}
}
