package agentcore

import (
	"fmt"
	"testing"

	"github.com/switchboard-chat/switchboard/tools"
)

// BenchmarkOpenAIRequest builds the request of a model call with a window
// of 50 messages, as the daemon does for every call.
func BenchmarkOpenAIRequest(b *testing.B) {
	p := &OpenAI{model: "m"}
	req := windowOf50()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.params(req); err != nil {
			b.Fatal(err)
		}
	}
}

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
		params, err := p.params(req)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := params.MarshalJSON(); err != nil { // as the SDK encodes a request
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
