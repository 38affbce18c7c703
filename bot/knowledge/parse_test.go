package knowledge_test

import (
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/bot/knowledge"
)

func TestKeyNormalizes(t *testing.T) {
	for in, want := range map[string]string{
		"  Alice   Smith ": "alice smith",
		"ＡＣＭＥ\tCorp":       "acme corp",
		"ﬁle Server":       "file server",
	} {
		if got := knowledge.Key(in); got != want {
			t.Errorf("Key(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseFactsAcceptsTheSchema(t *testing.T) {
	f, err := knowledge.ParseFacts("```json\n" + `{"entities": [{"name": "Alice  Smith", "type": "Person"}, {"name": "ACME", "type": "org"},
		{"name": "alice smith", "type": "person"}],
	  "relations": [{"from": "alice smith", "to": "Acme", "type": "works at"}, {"from": "Alice Smith", "to": "ACME", "type": "works_at"}]}` + "\n```")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Entities) != 2 || f.Entities[0] != (knowledge.Entity{Key: "alice smith", Name: "Alice Smith", Type: "person"}) {
		t.Errorf("entities = %+v; want Alice Smith and ACME, deduplicated by key", f.Entities)
	}
	if len(f.Relations) != 1 || f.Relations[0] != (knowledge.Relation{From: "alice smith", To: "acme", Type: "works_at"}) {
		t.Errorf("relations = %+v; want one works_at", f.Relations)
	}
	empty, err := knowledge.ParseFacts(`{"entities": [], "relations": []}`)
	if err != nil || len(empty.Entities) != 0 {
		t.Errorf("an empty answer = %+v, %v", empty, err)
	}
}

func TestParseFactsRefusesBadAnswers(t *testing.T) {
	many := `{"entities": [` + strings.Repeat(`{"name": "x", "type": "t"},`, knowledge.MaxEntities) + `{"name": "y", "type": "t"}], "relations": []}`
	for name, answer := range map[string]string{
		"broken JSON":      `{"entities": [{"name": "Alice"`,
		"not an object":    `[{"name": "Alice"}]`,
		"null":             `null`,
		"prose around":     `Here you go: {"entities": [], "relations": []}`,
		"trailing":         `{"entities": [], "relations": []} {"entities": []}`,
		"wrong type":       `{"entities": [{"name": 7, "type": "person"}], "relations": []}`,
		"relations object": `{"entities": [], "relations": {"from": "a"}}`,
		"unknown field":    `{"entities": [{"name": "Alice", "type": "person", "password": "x"}], "relations": []}`,
		"unknown entity":   `{"entities": [{"name": "Alice", "type": "person"}], "relations": [{"from": "Alice", "to": "Mallory", "type": "knows"}]}`,
		"empty name":       `{"entities": [{"name": "  ", "type": "person"}], "relations": []}`,
		"long name":        `{"entities": [{"name": "` + strings.Repeat("a", knowledge.MaxNameRunes+1) + `", "type": "person"}], "relations": []}`,
		"escape sequence":  `{"entities": [{"name": "Alice\u001b[31m", "type": "person"}], "relations": []}`,
		"bidi override":    `{"entities": [{"name": "Alice\u202e", "type": "person"}], "relations": []}`,
		"empty relation":   `{"entities": [{"name": "A"}, {"name": "B"}], "relations": [{"from": "A", "to": "B", "type": ""}]}`,
		"too many":         many,
		"oversized":        `{"entities": [], "relations": [], "x": "` + strings.Repeat("a", knowledge.MaxOutputBytes) + `"}`,
	} {
		if f, err := knowledge.ParseFacts(answer); err == nil {
			t.Errorf("%s: accepted as %+v", name, f)
		}
	}
}
