package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/switchboard-chat/switchboard/tools"
	"github.com/switchboard-chat/switchboard/tools/fs"
)

// maxMemoryHits bounds one memory_search.
const maxMemoryHits = 10

// Options configures memory_search and memory_get.
type Options struct {
	Docs tools.DocStore
	// AgentKind returns an agent's kind; nil means predefined.
	AgentKind func(agent string) string
	// Embedder, when set (and Docs is a VectorStore), adds search by
	// meaning: results of both searches are merged by reciprocal rank.
	Embedder tools.Embedder
}

// NewTools returns memory_search and memory_get. Memory documents
// are written with write_file under memory/ (or MEMORY.md): per chat for a
// predefined agent, per person for an open one, with the agent's own as a
// shared fallback.
func NewTools(o Options) []tools.Tool {
	return []tools.Tool{&MemorySearch{o}, &MemoryGet{o}}
}

// memoryScopes are the scopes a call's memory is read from, best first.
func (o Options) memoryScopes(c tools.Call) []string {
	kind := tools.KindPredefined
	if o.AgentKind != nil {
		kind = o.AgentKind(c.Agent)
	}
	_, read := tools.DocScopes(kind, c, "MEMORY.md")
	return read
}

// MemorySearch is the memory_search tool: full-text search over the
// agent's memory documents.
type MemorySearch struct{ o Options }

// Name implements Tool.
func (*MemorySearch) Name() string { return "memory_search" }

// Description implements Tool.
func (*MemorySearch) Description() string {
	return "Search your memory documents (MEMORY.md and memory/*.md, written with write_file) by words; " +
		"returns the best matching documents with snippets. Use memory_get to read one."
}

// Parameters implements Tool.
func (*MemorySearch) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"],"additionalProperties":false}`)
}

// SideEffect implements Tool.
func (*MemorySearch) SideEffect() tools.SideEffect { return tools.SideEffectNone }

// Execute implements Tool.
func (t *MemorySearch) Execute(ctx context.Context, raw json.RawMessage) tools.Result {
	var a struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal(raw, &a); err != nil || strings.TrimSpace(a.Query) == "" {
		return tools.ErrorResult(`pass {"query": "words to look for"}`)
	}
	call, _ := tools.CallFrom(ctx)
	if call.Agent == "" || call.Session == "" {
		return tools.ErrorResult("memory works only inside a conversation")
	}
	scopes := t.o.memoryScopes(call)
	hits, err := t.o.Docs.SearchMemory(ctx, call.Agent, scopes, a.Query, maxMemoryHits)
	if err != nil {
		return tools.ErrorResult("could not search memory right now (storage unavailable); try again later")
	}
	if vs, ok := t.o.Docs.(tools.VectorStore); ok && t.o.Embedder != nil {
		if vecs, err := t.o.Embedder.Embed(ctx, []string{a.Query}); err == nil {
			if near, err := vs.NearestMemory(ctx, call.Agent, scopes, vecs[0], maxMemoryHits); err == nil {
				hits = fuseRanks(hits, near, maxMemoryHits)
			}
		}
	}
	if len(hits) == 0 {
		return tools.Result{ForLLM: "nothing in memory matches " + a.Query}
	}
	var b strings.Builder
	for i, h := range hits {
		fmt.Fprintf(&b, "%d. %s\n   %s\n", i+1, h.Path, strings.Join(strings.Fields(h.Snippet), " "))
	}
	return tools.Result{ForLLM: b.String()}
}

// MemoryGet is the memory_get tool: one memory document.
type MemoryGet struct{ o Options }

// Name implements Tool.
func (*MemoryGet) Name() string { return "memory_get" }

// Description implements Tool.
func (*MemoryGet) Description() string {
	return "Read one memory document by path (MEMORY.md or memory/NAME.md)."
}

// Parameters implements Tool.
func (*MemoryGet) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)
}

// SideEffect implements Tool.
func (*MemoryGet) SideEffect() tools.SideEffect { return tools.SideEffectNone }

// Execute implements Tool.
func (t *MemoryGet) Execute(ctx context.Context, raw json.RawMessage) tools.Result {
	var a struct {
		Path string `json:"path"`
	}
	if err := json.Unmarshal(raw, &a); err != nil || a.Path == "" {
		return tools.ErrorResult(`pass {"path": "memory/NAME.md"}`)
	}
	p := strings.TrimPrefix(filepath.ToSlash(filepath.Clean(a.Path)), "./")
	if !tools.IsMemoryPath(p) {
		return tools.ErrorResult(fmt.Sprintf("%s is not a memory document; memory documents are MEMORY.md and memory/*.md", a.Path))
	}
	call, _ := tools.CallFrom(ctx)
	if call.Agent == "" || call.Session == "" {
		return tools.ErrorResult("memory works only inside a conversation")
	}
	for _, scope := range t.o.memoryScopes(call) {
		text, err := t.o.Docs.GetDoc(ctx, tools.DocKey{Agent: call.Agent, Scope: scope, Path: p})
		if errors.Is(err, tools.ErrNoDoc) {
			continue
		}
		if err != nil {
			return tools.ErrorResult("could not read memory right now (storage unavailable); try again later")
		}
		return fs.LineRange(p, text, 0, 0)
	}
	return tools.ErrorResult(fmt.Sprintf("%s is not in memory; memory_search finds documents by words", p))
}

// minSimilarity is the cosine similarity below which a vector hit is noise.
const minSimilarity = 0.3

// fuseRanks merges word-search and meaning-search hits by reciprocal rank
// fusion (each list adds 1/(60+rank)); a document keeps the word search's
// highlighted snippet when it has one.
func fuseRanks(words, meaning []tools.MemoryHit, limit int) []tools.MemoryHit {
	type entry struct {
		hit   tools.MemoryHit
		score float64
	}
	byKey := map[string]*entry{}
	var order []string
	add := func(list []tools.MemoryHit, vector bool) {
		for i, h := range list {
			if vector && h.Rank < minSimilarity {
				continue
			}
			k := h.Scope + "\x00" + h.Path
			e, ok := byKey[k]
			if !ok {
				e = &entry{hit: h}
				byKey[k] = e
				order = append(order, k)
			}
			e.score += 1 / float64(60+i+1)
		}
	}
	add(words, false)
	add(meaning, true)
	sort.SliceStable(order, func(i, j int) bool { return byKey[order[i]].score > byKey[order[j]].score })
	out := make([]tools.MemoryHit, 0, min(len(order), limit))
	for _, k := range order[:min(len(order), limit)] {
		h := byKey[k].hit
		h.Rank = byKey[k].score
		out = append(out, h)
	}
	return out
}
