package agentcore

import (
	"fmt"
	"testing"
)

// BenchmarkOpenAIRequest builds the request of a model call with a window
// of 50 messages, as the daemon does for every call.
func BenchmarkOpenAIRequest(b *testing.B) {
	p := &OpenAI{model: "m"}
	req := Request{System: "You are a helpful assistant."}
	for i := range 50 {
		role := RoleUser
		if i%2 == 1 {
			role = RoleAssistant
		}
		req.Messages = append(req.Messages, Message{Role: role, Content: fmt.Sprintf("message %d of the conversation", i)})
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.params(req); err != nil {
			b.Fatal(err)
		}
	}
}
