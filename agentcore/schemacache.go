package agentcore

import (
	"encoding/json"
	"sync"
)

// maxCachedSchemas bounds a schemaCache: far more tools than any agent
// offers, so it is only reached if schemas keep changing (an MCP server
// that renames its tools), and then the cache starts over.
const maxCachedSchemas = 4096

// schemaCache remembers what tools' parameter schemas become on a
// provider's wire, by the schema's text. The same few dozen schemas go out
// with every model call, and checking each one again was 8 % of the
// daemon's CPU under load (docs/benchmarks.md, twelfth round). Safe for
// concurrent use; the zero value is ready.
type schemaCache struct {
	mu sync.Mutex
	m  map[string]json.RawMessage
}

// get returns convert(raw), from the cache when raw was converted before.
// Failures are not kept: a bad schema fails every call that offers it.
func (c *schemaCache) get(raw json.RawMessage, convert func(json.RawMessage) (json.RawMessage, error)) (json.RawMessage, error) {
	c.mu.Lock()
	wire, ok := c.m[string(raw)]
	c.mu.Unlock()
	if ok {
		return wire, nil
	}
	wire, err := convert(raw)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedSchemas {
		c.m = map[string]json.RawMessage{}
	}
	c.m[string(raw)] = wire
	c.mu.Unlock()
	return wire, nil
}
