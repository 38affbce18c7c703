package knowledge_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/bot/knowledge"
	"github.com/switchboard-chat/switchboard/tools"
)

// stubGraph answers every search with g (or err) and records the searches.
type stubGraph struct {
	g      knowledge.Graph
	err    error
	scopes []string
	q      knowledge.Query
}

func (s *stubGraph) SearchGraph(_ context.Context, _ string, scopes []string, q knowledge.Query) (knowledge.Graph, error) {
	s.scopes, s.q = scopes, q
	return s.g, s.err
}

func searchCall(t *testing.T, g *stubGraph, kind, args string) tools.Result {
	t.Helper()
	tool := knowledge.NewTool(knowledge.ToolOptions{Graph: g, AgentKind: func(string) string { return kind }})
	ctx := tools.WithCall(context.Background(), tools.Call{Channel: "telegram", ChatID: "5", UserID: "telegram:9", Agent: "assistant", Session: "s"})
	return tool.Execute(ctx, json.RawMessage(args))
}

func TestSearchToolScopesAndBounds(t *testing.T) {
	g := &stubGraph{}
	searchCall(t, g, tools.KindPredefined, `{"query": "  Alice   SMITH "}`)
	if !slices.Equal(g.scopes, []string{"chat:telegram:5", ""}) {
		t.Errorf("a predefined agent searched %v; want the chat's memory and the agent's own", g.scopes)
	}
	if !slices.Equal(g.q.Terms, []string{"alice smith", "alice", "smith"}) || g.q.Depth != 1 ||
		g.q.MaxEntities != knowledge.MaxResultEntities || g.q.MaxRelations != knowledge.MaxResultRelations {
		t.Errorf("query = %+v", g.q)
	}
	searchCall(t, g, tools.KindOpen, `{"query": "x", "depth": 3}`)
	if !slices.Equal(g.scopes, []string{"user:telegram:9", ""}) || g.q.Depth != 3 {
		t.Errorf("an open agent searched %v at depth %d; want the person's memory", g.scopes, g.q.Depth)
	}
	for _, bad := range []string{`{"query": "x", "depth": 4}`, `{"query": "x", "depth": -1}`, `{"query": ""}`, `{"depth": 1}`, `not json`, `{"query": "x", "depth": "deep"}`} {
		if r := searchCall(t, g, tools.KindPredefined, bad); !r.IsError {
			t.Errorf("%s was accepted: %q", bad, r.ForLLM)
		}
	}
}

func TestSearchToolRendersTheGraph(t *testing.T) {
	g := &stubGraph{g: knowledge.Graph{
		Nodes: []knowledge.Node{{Key: "alice", Name: "Alice", Type: "person"}, {Key: "acme", Name: "Acme", Type: "org", Depth: 1}},
		Edges: []knowledge.Edge{{From: "alice", To: "acme", Type: "works_at", Scope: "chat:telegram:5", Path: "memory/people.md"},
			{From: "acme", To: "alice", Type: "employs", Path: "MEMORY.md"}},
		MoreEdges: true,
	}}
	out := searchCall(t, g, tools.KindPredefined, `{"query": "alice"}`).ForLLM
	for _, want := range []string{"Alice (person) — matches", "Acme (org) — 1 away", "Alice —works_at→ Acme (source: memory/people.md)",
		"Acme —employs→ Alice (source: MEMORY.md, shared)", "more not shown"} {
		if !strings.Contains(out, want) {
			t.Errorf("result lacks %q:\n%s", want, out)
		}
	}
	g.g = knowledge.Graph{}
	if out := searchCall(t, g, tools.KindPredefined, `{"query": "nobody"}`).ForLLM; !strings.Contains(out, "no entity") {
		t.Errorf("empty result = %q", out)
	}
	g.err = errors.New("db down")
	if r := searchCall(t, g, tools.KindPredefined, `{"query": "x"}`); !r.IsError || !strings.Contains(r.ForLLM, "try again later") {
		t.Errorf("storage failure = %+v", r)
	}
}
