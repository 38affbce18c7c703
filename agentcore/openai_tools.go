package agentcore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"

	"github.com/switchboard-chat/switchboard/tools"
)

// openAIEmptySchema is the parameters of a tool that declares none.
var openAIEmptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// maxCachedTools bounds an openAIToolCache; when full it starts over.
const maxCachedTools = 1024

// openAIToolCache keeps each tool's wire JSON, its schema checked once.
// Every model call sends the agent's whole tool list, the same from call
// to call: building and checking it anew took about 4 % of a message's CPU
// with the default agent's 25 tools. An entry is found by the tool's name
// and used only when the description and schema are the same bytes. Safe
// for concurrent use; the zero value is ready.
type openAIToolCache struct {
	mu     sync.Mutex
	byName map[string]openAIWireTool
}

type openAIWireTool struct {
	description string
	parameters  json.RawMessage
	wire        json.RawMessage
}

// list maps specs onto function tools whose parameters must be JSON
// schema objects. A schema goes out as the caller wrote it, so its member
// order is kept. Each tool goes to the SDK as raw JSON (param.Override):
// the SDK's reflective encoding of its own tool structs took about a sixth
// of the daemon's CPU per model call with the default agent's tools
// (BenchmarkOpenAIRequestBody).
func (c *openAIToolCache) list(specs []tools.Spec) ([]openai.ChatCompletionToolUnionParam, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	out := make([]openai.ChatCompletionToolUnionParam, 0, len(specs))
	for _, t := range specs {
		wire, err := c.wire(t)
		if err != nil {
			return nil, err
		}
		out = append(out, param.Override[openai.ChatCompletionToolUnionParam](wire))
	}
	return out, nil
}

// wire returns t as the Chat Completions API takes it, kept or built.
func (c *openAIToolCache) wire(t tools.Spec) (json.RawMessage, error) {
	c.mu.Lock()
	kept, ok := c.byName[t.Name]
	c.mu.Unlock()
	if ok && kept.description == t.Description && bytes.Equal(kept.parameters, t.Parameters) {
		return kept.wire, nil
	}
	schema := openAIEmptySchema
	if len(t.Parameters) > 0 && string(t.Parameters) != "null" {
		if trimmed := bytes.TrimLeft(t.Parameters, " \t\r\n"); len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
			return nil, fmt.Errorf("openai: tool %s: parameters are not a JSON schema object", t.Name)
		}
		schema = t.Parameters
	}
	wire := openAIToolJSON(t.Name, t.Description, schema)
	c.mu.Lock()
	if c.byName == nil || len(c.byName) >= maxCachedTools {
		c.byName = make(map[string]openAIWireTool)
	}
	c.byName[t.Name] = openAIWireTool{description: t.Description, parameters: bytes.Clone(t.Parameters), wire: wire}
	c.mu.Unlock()
	return wire, nil
}

// openAIToolJSON is a function tool as the Chat Completions API takes it,
// the schema (checked valid) spliced in as it is: encoding it through a
// struct would scan it once more, and the SDK scans it once anyway.
func openAIToolJSON(name, description string, schema json.RawMessage) json.RawMessage {
	str := func(s string) []byte { b, _ := json.Marshal(s); return b } // a string always encodes
	b := make([]byte, 0, len(schema)+len(name)+len(description)+64)
	b = append(b, `{"type":"function","function":{"name":`...)
	b = append(b, str(name)...)
	if description != "" {
		b = append(b, `,"description":`...)
		b = append(b, str(description)...)
	}
	b = append(b, `,"parameters":`...)
	b = append(b, schema...)
	return append(b, "}}"...)
}
