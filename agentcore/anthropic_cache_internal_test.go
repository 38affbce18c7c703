package agentcore

import (
	"encoding/json"
	"testing"

	"github.com/switchboard-chat/switchboard/tools"
)

// A tool's schema encodes to the same bytes on every request: the tools
// open the cached prefix, and members written in map order would change
// it each time.
func TestAnthropicToolSchemaEncodesTheSameEveryTime(t *testing.T) {
	p := NewAnthropic(AnthropicOptions{Model: "m"})
	req := Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}, Tools: []tools.Spec{{Name: "x", Parameters: json.RawMessage(
		`{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"string"}},"required":["b"],` +
			`"additionalProperties":false,"$schema":"s","description":"d","title":"t","$defs":{"k":{}},"examples":[1]}`)}}}
	var first []byte
	for i := range 50 {
		params, err := p.params(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(params.Tools)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = b
		} else if string(b) != string(first) {
			t.Fatalf("encoding %d differs:\n%s\n%s", i, first, b)
		}
	}
}
