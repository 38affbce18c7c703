package agentcore

import (
	"bytes"
	"encoding/json"
	"errors"
	"hash/maphash"
	"sync"

	"github.com/switchboard-chat/switchboard/tools"
)

// maxCachedToolLists bounds a toolsCache: an agent offers one list (fewer
// tools when a policy hides some), so it is only reached if the lists keep
// changing (an MCP server that renames its tools), and then the cache starts
// over.
const maxCachedToolLists = 64

// toolsCache remembers a provider's encoded "tools" array for a list of tool
// specs. The same list goes out with every model call of an agent, and
// checking and encoding its schemas each time was an eighth of the daemon's
// CPU under load (docs/benchmarks.md, twelfth round). A hit is compared with
// a copy of the list it was made for, so two lists never share an entry.
// Safe for concurrent use; the zero value is ready.
type toolsCache struct {
	mu      sync.Mutex
	entries map[uint64]toolsEntry
}

// toolsSeed seeds every toolsCache's hashes; set once, never changed.
var toolsSeed = maphash.MakeSeed()

// toolsEntry is one encoded list.
type toolsEntry struct {
	specs []tools.Spec // a copy of the list
	wire  json.RawMessage
}

// get returns encode(specs), from the cache when this list was encoded
// before; nil for no tools. Failures are not kept: a bad schema fails every
// call that offers it.
func (c *toolsCache) get(specs []tools.Spec, encode func([]tools.Spec) (json.RawMessage, error)) (json.RawMessage, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	key := hashSpecs(toolsSeed, specs)
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if ok && sameSpecs(e.specs, specs) {
		return e.wire, nil
	}
	wire, err := encode(specs)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[uint64]toolsEntry{}
	}
	if len(c.entries) >= maxCachedToolLists {
		clear(c.entries)
	}
	c.entries[key] = toolsEntry{specs: cloneSpecs(specs), wire: wire}
	c.mu.Unlock()
	return wire, nil
}

func hashSpecs(seed maphash.Seed, specs []tools.Spec) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	for _, s := range specs {
		h.WriteString(s.Name)
		h.WriteByte(0)
		h.WriteString(s.Description)
		h.WriteByte(0)
		h.Write(s.Parameters)
		h.WriteByte(0)
	}
	return h.Sum64()
}

func sameSpecs(a, b []tools.Spec) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Description != b[i].Description || !bytes.Equal(a[i].Parameters, b[i].Parameters) {
			return false
		}
	}
	return true
}

func cloneSpecs(specs []tools.Spec) []tools.Spec {
	out := make([]tools.Spec, len(specs))
	for i, s := range specs {
		out[i] = tools.Spec{Name: s.Name, Description: s.Description, Parameters: bytes.Clone(s.Parameters)}
	}
	return out
}

// encodeWithTools encodes body, a JSON object without a "tools" member, and
// adds "tools": list when list is not empty. Splicing the cached list in
// spares encoding/json re-checking every schema in it on every call. The
// body is encoded into a pooled buffer and copied once, into a request
// made its exact size.
func encodeWithTools(body any, list json.RawMessage) ([]byte, error) {
	if len(list) == 0 {
		return json.Marshal(body)
	}
	scratch := encodeBufs.Get().(*bytes.Buffer)
	defer encodeBufs.Put(scratch)
	scratch.Reset()
	if err := json.NewEncoder(scratch).Encode(body); err != nil {
		return nil, err
	}
	payload := bytes.TrimSuffix(scratch.Bytes(), []byte("\n"))
	if len(payload) < 2 || payload[0] != '{' {
		return nil, errors.New("request is not a JSON object")
	}
	const head = `{"tools":`
	out := make([]byte, 0, len(head)+len(list)+len(payload))
	out = append(out, head...)
	out = append(out, list...)
	if len(payload) > 2 { // not "{}"
		out = append(out, ',')
	}
	return append(out, payload[1:]...), nil
}

// encodeBufs holds the buffers encodeWithTools encodes request bodies in.
var encodeBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}
