package bot

import (
	"crypto/rand"
	"encoding/base32"
	"strings"
)

// Button data is "<kind>:<id>:<choice>": the kind says which feature owns
// the button (HandlePresses), the id names a record on the server, the
// choice is one letter. Nothing else travels to the platform and back, so
// a forged or replayed press can only name a record and a choice — the
// server checks who pressed and whether the record is still open.

// kindLen and idLen are the lengths of a button kind and of ids made by
// NewID.
const (
	kindLen = 2
	idLen   = 20
)

// NewID returns a random, unguessable id (100 bits, 20 lower-case base32
// characters) short enough for Telegram's 64-byte button data: the id a
// feature's button names its record by.
func NewID() string {
	var b [13]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:])[:idLen])
}

// validKind reports whether kind has the shape of a button kind: two
// lower-case letters.
func validKind(kind string) bool {
	return len(kind) == kindLen && strings.IndexFunc(kind, func(c rune) bool { return c < 'a' || c > 'z' }) < 0
}

// parseButton splits button data, accepting only the exact shape the
// daemon produces: a known kind, a 20-character lower-case base32 id and a
// one-letter choice.
func parseButton(data string, known func(kind string) bool) (kind, id, choice string, ok bool) {
	if len(data) != kindLen+1+idLen+2 {
		return "", "", "", false
	}
	kind, rest, _ := strings.Cut(data, ":")
	id, choice, found := strings.Cut(rest, ":")
	if !found || !validKind(kind) || !known(kind) || len(id) != idLen || len(choice) != 1 {
		return "", "", "", false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return "", "", "", false
		}
	}
	if c := choice[0]; c < 'a' || c > 'z' {
		return "", "", "", false
	}
	return kind, id, choice, true
}
