package knowledge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// The bounds of one document's extracted facts; an answer beyond any of
// them is refused whole.
const (
	// MaxOutputBytes bounds the model's answer.
	MaxOutputBytes = 64 << 10
	// MaxEntities and MaxRelations bound one document's facts.
	MaxEntities  = 100
	MaxRelations = 200
	// MaxNameRunes bounds an entity's name; MaxTypeRunes a type.
	MaxNameRunes = 120
	MaxTypeRunes = 40
)

// wireFacts is the JSON the model is asked for (see systemPrompt); any
// other field makes the answer invalid.
type wireFacts struct {
	Entities []struct {
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"entities"`
	Relations []struct {
		From string `json:"from"`
		To   string `json:"to"`
		Type string `json:"type"`
	} `json:"relations"`
}

// ParseFacts checks the model's answer against the schema — a JSON object
// with only "entities" ({name, type}) and "relations" ({from, to, type}),
// within the bounds above, every relation between two of the entities
// returned — and returns the facts, entities and relations deduplicated by
// key. A single ```json fence around the object is tolerated. Any
// violation refuses the whole answer: a document's facts are never
// half-written.
func ParseFacts(answer string) (Facts, error) {
	if len(answer) > MaxOutputBytes {
		return Facts{}, fmt.Errorf("the answer is %d bytes, more than %d", len(answer), MaxOutputBytes)
	}
	if !utf8.ValidString(answer) {
		return Facts{}, errors.New("the answer is not valid UTF-8")
	}
	body := strings.TrimSpace(unfence(answer))
	if !strings.HasPrefix(body, "{") {
		return Facts{}, errors.New("the answer is not a JSON object")
	}
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	var w wireFacts
	if err := dec.Decode(&w); err != nil {
		return Facts{}, fmt.Errorf("the answer is not the JSON object asked for: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Facts{}, errors.New("the answer has more after its JSON object")
	}
	if len(w.Entities) > MaxEntities || len(w.Relations) > MaxRelations {
		return Facts{}, fmt.Errorf("the answer has %d entities and %d relations; at most %d and %d are kept",
			len(w.Entities), len(w.Relations), MaxEntities, MaxRelations)
	}
	var f Facts
	seen := map[string]bool{}
	for i, e := range w.Entities {
		ent, err := entityOf(e.Name, e.Type)
		if err != nil {
			return Facts{}, fmt.Errorf("entities[%d]: %w", i, err)
		}
		if !seen[ent.Key] {
			seen[ent.Key] = true
			f.Entities = append(f.Entities, ent)
		}
	}
	linked := map[Relation]bool{}
	for i, r := range w.Relations {
		rel, err := relationOf(r.From, r.To, r.Type, seen)
		if err != nil {
			return Facts{}, fmt.Errorf("relations[%d]: %w", i, err)
		}
		if !linked[rel] && rel.From != rel.To {
			linked[rel] = true
			f.Relations = append(f.Relations, rel)
		}
	}
	return f, nil
}

// entityOf checks and normalizes one entity.
func entityOf(name, typ string) (Entity, error) {
	if err := checkText("name", name, MaxNameRunes, true); err != nil {
		return Entity{}, err
	}
	if err := checkText("type", typ, MaxTypeRunes, false); err != nil {
		return Entity{}, err
	}
	e := Entity{Key: Key(name), Name: strings.Join(strings.Fields(name), " "), Type: typeOf(typ)}
	if e.Key == "" {
		return Entity{}, errors.New("name is empty")
	}
	return e, nil
}

// relationOf checks one relation against the entities returned.
func relationOf(from, to, typ string, entities map[string]bool) (Relation, error) {
	if err := checkText("type", typ, MaxTypeRunes, true); err != nil {
		return Relation{}, err
	}
	rel := Relation{From: Key(from), To: Key(to), Type: typeOf(typ)}
	for _, end := range []struct{ field, key, raw string }{{"from", rel.From, from}, {"to", rel.To, to}} {
		if !entities[end.key] {
			return Relation{}, fmt.Errorf("%s %q is not one of the entities returned", end.field, truncate(end.raw, 40))
		}
	}
	return rel, nil
}

// checkText checks one name or type: at most max characters, no control
// or format characters, and not blank when required.
func checkText(field, s string, max int, required bool) error {
	switch {
	case required && strings.TrimSpace(s) == "":
		return fmt.Errorf("%s is empty", field)
	case utf8.RuneCountInString(s) > max:
		return fmt.Errorf("%s is longer than %d characters", field, max)
	case hostile(s):
		return fmt.Errorf("%s holds control characters", field)
	}
	return nil
}

// unfence strips one Markdown code fence (```json … ```) around s.
func unfence(s string) string {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "```") || !strings.HasSuffix(t, "```") || len(t) < 6 {
		return s
	}
	t = strings.TrimSuffix(strings.TrimPrefix(t, "```"), "```")
	if nl := strings.IndexByte(t, '\n'); nl >= 0 && !bytes.ContainsAny([]byte(t[:nl]), "{[") {
		t = t[nl+1:] // the fence's language tag
	}
	return t
}

// truncate cuts s to at most n runes, for error messages.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
