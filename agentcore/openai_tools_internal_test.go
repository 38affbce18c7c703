package agentcore

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/tools"
)

// A kept tool is sent only while its spec is the same: a schema or
// description that changed under the same name goes out as it is now, and
// one that stopped being a JSON object is refused, not served from memory.
func TestOpenAIToolCacheSendsTheSpecAsItIsNow(t *testing.T) {
	var c openAIToolCache
	wire := func(s tools.Spec) string {
		t.Helper()
		list, err := c.list([]tools.Spec{s})
		if err != nil {
			t.Fatalf("list(%s): %v", s.Parameters, err)
		}
		return string(list)
	}
	v1 := tools.Spec{Name: "exec", Description: "runs", Parameters: json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"string"}}}`)}
	if got := wire(v1); !strings.Contains(got, `"cmd"`) || wire(v1) != got {
		t.Fatalf("first sends %s", got)
	}
	v2 := v1
	v2.Parameters = json.RawMessage(`{"type":"object","properties":{"argv":{"type":"array"}}}`)
	if got := wire(v2); !strings.Contains(got, `"argv"`) || strings.Contains(got, `"cmd"`) {
		t.Fatalf("a changed schema under the same name sends %s", got)
	}
	v3 := v2
	v3.Description = "runs a command"
	if got := wire(v3); !strings.Contains(got, `"runs a command"`) {
		t.Fatalf("a changed description sends %s", got)
	}
	broken := v3
	broken.Parameters = json.RawMessage(`{"type":"object",`)
	if _, err := c.list([]tools.Spec{broken}); err == nil || !strings.Contains(err.Error(), "not a JSON schema object") {
		t.Fatalf("a broken schema after a kept one: err %v", err)
	}
}

// The budget's count of the tool schemas is never below what the OpenAI
// wire carries for them (4 bytes a token, 4 a tool), escapes included:
// quotes, newlines and HTML-special characters grow on the way out.
func TestFixedCostCoversTheToolsOnTheWire(t *testing.T) {
	specs := []tools.Spec{
		{Name: "exec", Description: "Runs a command.", Parameters: json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"string"}}}`)},
		{Name: "quote", Description: "Says \"hi\"\n\tand <b>bold</b> & more \\ \x01", Parameters: json.RawMessage(`{"type":"object","description":"a <tag> & \"q\""}`)},
		{Name: "bare"},
	}
	var c openAIToolCache
	list, err := c.list(specs)
	if err != nil {
		t.Fatal(err)
	}
	var sent []json.RawMessage // each tool as the request carries it
	if err := json.Unmarshal(list, &sent); err != nil || len(sent) != len(specs) {
		t.Fatalf("tools %s: %v", list, err)
	}
	wire := messageOverhead // the system prompt's, as fixed counts it
	for _, b := range sent {
		wire += messageOverhead + (len(b)+bytesPerToken-1)/bytesPerToken
	}
	if got := (tokenCosts{}).fixed("", specs); got < wire {
		t.Errorf("fixed counts %d tokens for tools the wire carries in %d", got, wire)
	}
}
