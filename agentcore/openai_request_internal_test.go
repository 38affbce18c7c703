package agentcore

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/switchboard-chat/switchboard/tools"
)

// BenchmarkOpenAIRequestBody builds and encodes the body of one model call
// with 25 tools (about the default agent's) and a 50-message window: the
// tool list is most of every request's bytes.
func BenchmarkOpenAIRequestBody(b *testing.B) {
	p := &OpenAI{model: "m"}
	req := windowOf50()
	for i := range 25 {
		req.Tools = append(req.Tools, tools.Spec{Name: fmt.Sprintf("tool_%d", i), Description: "Does one thing to the workspace; say what and where.",
			Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string","description":"a file in the workspace"},` +
				`"content":{"type":"string","description":"what to write"},"mode":{"type":"string","enum":["append","replace"]}},"required":["path"]}`)})
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.body(req); err != nil {
			b.Fatal(err)
		}
	}
}

// windowOf50 is a request with a window of 50 short messages, user and
// assistant in turn.
func windowOf50() Request {
	req := Request{System: "You are a helpful assistant."}
	for i := range 50 {
		role := RoleUser
		if i%2 == 1 {
			role = RoleAssistant
		}
		req.Messages = append(req.Messages, Message{Role: role, Content: fmt.Sprintf("message %d of the conversation", i)})
	}
	return req
}

// BenchmarkOpenAIStreamDecode decodes a streamed answer of 300 chunks (a
// chunk every token or so, as OpenAI sends them) into the accumulator, and
// for comparison into the SDK's ChatCompletionChunk, which Chat no longer
// uses.
func BenchmarkOpenAIStreamDecode(b *testing.B) {
	var body bytes.Buffer
	const chunks = 300
	head := `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","system_fingerprint":"fp_1","choices":[{"index":0,"delta":`
	for i := range chunks {
		fmt.Fprintf(&body, `%s{"content":"word%d "},"logprobs":null,"finish_reason":null}]}`+"\n\n", head, i)
	}
	fmt.Fprintf(&body, `%s{},"logprobs":null,"finish_reason":"stop"}]}`+"\n\n", head)
	body.WriteString("data: [DONE]\n\n")
	response := func() *http.Response {
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
			Body: io.NopCloser(bytes.NewReader(body.Bytes()))}
	}
	b.Run("chunk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			stream := ssestream.NewStream[openAIChunk](ssestream.NewDecoder(response()), nil)
			acc := openAIStream{}
			for stream.Next() {
				acc.add(stream.Current())
			}
			if stream.Err() != nil || acc.finish != "stop" || acc.chunks != chunks+1 {
				b.Fatalf("err %v, finish %q after %d chunks", stream.Err(), acc.finish, acc.chunks)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*chunks), "ns/chunk")
	})
	b.Run("sdk-chunk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			stream := ssestream.NewStream[openai.ChatCompletionChunk](ssestream.NewDecoder(response()), nil)
			n := 0
			for stream.Next() {
				n += len(stream.Current().Choices)
			}
			if stream.Err() != nil || n != chunks+1 {
				b.Fatalf("err %v after %d choices", stream.Err(), n)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*chunks), "ns/chunk")
	})
}
