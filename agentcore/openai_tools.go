package agentcore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

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

// list is specs as the request's "tools" array of function tools, nil
// for none. A schema must be a JSON object; it goes out as the caller
// wrote it, compacted, so its member order is kept.
func (c *openAIToolCache) list(specs []tools.Spec) ([]byte, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	wires := make([]json.RawMessage, len(specs))
	size := 1 + len(specs)
	for i, t := range specs {
		wire, err := c.wire(t)
		if err != nil {
			return nil, err
		}
		wires[i] = wire
		size += len(wire)
	}
	out := make([]byte, 0, size)
	out = append(out, '[')
	for i, w := range wires {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, w...)
	}
	return append(out, ']'), nil
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
// the schema (checked valid) compacted into it.
func openAIToolJSON(name, description string, schema json.RawMessage) json.RawMessage {
	str := func(s string) []byte { b, _ := json.Marshal(s); return b } // a string always encodes
	var b bytes.Buffer
	b.Grow(len(schema) + len(name) + len(description) + 64)
	b.WriteString(`{"type":"function","function":{"name":`)
	b.Write(str(name))
	if description != "" {
		b.WriteString(`,"description":`)
		b.Write(str(description))
	}
	b.WriteString(`,"parameters":`)
	_ = json.Compact(&b, schema) // valid: checked by wire
	b.WriteString("}}")
	return b.Bytes()
}
