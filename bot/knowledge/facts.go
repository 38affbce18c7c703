package knowledge

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Entity is one thing a memory document names: a person, a project, a
// place. Key is its normalized name (see Key), which identifies it across
// the documents of a scope.
type Entity struct {
	Key  string
	Name string
	Type string
}

// Relation is one fact linking two entities of the same document, by
// their keys ("alice" works_at "acme").
type Relation struct {
	From string
	To   string
	Type string
}

// Facts are what one document says: its entities and the relations
// between them.
type Facts struct {
	Entities  []Entity
	Relations []Relation
}

// Key normalizes an entity name for matching: Unicode NFKC (so "Ｆｕｌｌ"
// and "Full" meet), lower case, surrounding whitespace removed and inner
// runs of whitespace collapsed to one space.
func Key(name string) string {
	return strings.Join(strings.Fields(strings.ToLower(norm.NFKC.String(name))), " ")
}

// typeOf normalizes an entity or relation type: like Key, with spaces and
// hyphens as underscores ("works at" → "works_at").
func typeOf(t string) string {
	return strings.NewReplacer(" ", "_", "-", "_").Replace(Key(t))
}

// hostile reports whether s holds a control or format character other
// than whitespace (escape sequences, bidi overrides, zero-width tricks):
// no name or type needs one.
func hostile(s string) bool {
	for _, r := range s {
		if unicode.IsSpace(r) {
			continue
		}
		if unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || r == unicode.ReplacementChar {
			return true
		}
	}
	return false
}
