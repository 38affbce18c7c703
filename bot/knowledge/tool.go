package knowledge

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/switchboard-chat/switchboard/tools"
)

// The bounds of one knowledge_graph_search.
const (
	// MaxDepth is the deepest walk from a match; DefaultDepth the one
	// when none is asked.
	MaxDepth     = 3
	DefaultDepth = 1
	// MaxResultEntities and MaxResultRelations bound the answer.
	MaxResultEntities  = 50
	MaxResultRelations = 100
	// maxQueryRunes bounds the query; minTermRunes is the shortest word
	// matched on its own.
	maxQueryRunes = 200
	minTermRunes  = 3
)

// ToolOptions configures knowledge_graph_search.
type ToolOptions struct {
	Graph GraphStore
	// AgentKind returns an agent's kind; nil means predefined.
	AgentKind func(agent string) string
}

// NewTool returns knowledge_graph_search.
func NewTool(o ToolOptions) tools.Tool { return &Search{o: o} }

// Search is the knowledge_graph_search tool: entities of the call's memory
// scopes matching a query and their neighbourhood.
type Search struct{ o ToolOptions }

// Name implements tools.Tool.
func (*Search) Name() string { return "knowledge_graph_search" }

// Description implements tools.Tool.
func (*Search) Description() string {
	return "Search the knowledge graph built from your memory documents (people, projects, places… and how they relate). " +
		"Finds entities whose name contains the query (or one of its words) and the entities up to depth relations away " +
		"(default 1, at most 3), with each relation's source document (read it with memory_get)."
}

// Parameters implements tools.Tool.
func (*Search) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"query":{"type":"string","description":"a name or words of one, e.g. Alice or acme corp"},` +
		`"depth":{"type":"integer","minimum":0,"maximum":3,"description":"how many relations away to follow (default 1)"}},` +
		`"required":["query"],"additionalProperties":false}`)
}

// SideEffect implements tools.Tool.
func (*Search) SideEffect() tools.SideEffect { return tools.SideEffectNone }

// Execute implements tools.Tool.
func (t *Search) Execute(ctx context.Context, raw json.RawMessage) tools.Result {
	var a struct {
		Query string `json:"query"`
		Depth *int   `json:"depth"`
	}
	if err := json.Unmarshal(raw, &a); err != nil || strings.TrimSpace(a.Query) == "" {
		return tools.ErrorResult(`pass {"query": "a name", "depth": 1}`)
	}
	depth := DefaultDepth
	if a.Depth != nil {
		depth = *a.Depth
	}
	if depth < 0 || depth > MaxDepth {
		return tools.ErrorResult(fmt.Sprintf("depth must be 0 to %d; %d asks too much — search again with a smaller depth", MaxDepth, depth))
	}
	if utf8.RuneCountInString(a.Query) > maxQueryRunes {
		return tools.ErrorResult(fmt.Sprintf("the query is longer than %d characters; search for one name", maxQueryRunes))
	}
	call, _ := tools.CallFrom(ctx)
	if call.Agent == "" || call.Session == "" {
		return tools.ErrorResult("the knowledge graph works only inside a conversation")
	}
	kind := tools.KindPredefined
	if t.o.AgentKind != nil {
		kind = t.o.AgentKind(call.Agent)
	}
	_, scopes := tools.DocScopes(kind, call, "MEMORY.md")
	g, err := t.o.Graph.SearchGraph(ctx, call.Agent, scopes, Query{
		Terms: terms(a.Query), Depth: depth, MaxEntities: MaxResultEntities, MaxRelations: MaxResultRelations,
	})
	if err != nil {
		return tools.ErrorResult("could not search the knowledge graph right now (storage unavailable); try again later, or use memory_search")
	}
	if len(g.Nodes) == 0 {
		return tools.Result{ForLLM: "no entity in the knowledge graph matches " + a.Query +
			"; try another name, or memory_search (documents written in the last moments may not be in the graph yet)"}
	}
	return tools.Result{ForLLM: render(g)}
}

// terms are the query's normalized forms to match: the whole query, then
// each of its words of at least minTermRunes characters.
func terms(query string) []string {
	whole := Key(query)
	out := []string{whole}
	for _, w := range strings.Fields(whole) {
		if w != whole && utf8.RuneCountInString(w) >= minTermRunes {
			out = append(out, w)
		}
	}
	return out
}

// render lists the graph's entities and relations for the model.
func render(g Graph) string {
	var b strings.Builder
	names := make(map[string]string, len(g.Nodes))
	fmt.Fprintf(&b, "Entities (%d", len(g.Nodes))
	if g.MoreNodes {
		b.WriteString(", more not shown: search for a narrower name or a smaller depth")
	}
	b.WriteString("):\n")
	for _, n := range g.Nodes {
		names[n.Key] = n.Name
		b.WriteString("- " + n.Name)
		if n.Type != "" {
			b.WriteString(" (" + n.Type + ")")
		}
		if n.Depth == 0 {
			b.WriteString(" — matches")
		} else {
			fmt.Fprintf(&b, " — %d away", n.Depth)
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "Relations (%d", len(g.Edges))
	if g.MoreEdges {
		b.WriteString(", more not shown: search for a narrower name or a smaller depth")
	}
	b.WriteString("):\n")
	if len(g.Edges) == 0 {
		b.WriteString("none\n")
	}
	for _, e := range g.Edges {
		source := e.Path
		if e.Scope == "" {
			source += ", shared"
		}
		fmt.Fprintf(&b, "- %s —%s→ %s (source: %s)\n", names[e.From], e.Type, names[e.To], source)
	}
	return strings.TrimRight(b.String(), "\n")
}
