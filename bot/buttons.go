package bot

import "strings"

// Button data is "<kind>:<id>:<choice>": the kind says which service owns
// the button, the id names a record on the server, the choice is one
// letter. Nothing else travels to the platform and back, so a forged or
// replayed press can only name a record and a choice — the server checks
// who pressed and whether the record is still open.
const (
	buttonApproval = "ap"
	buttonAccess   = "ar"
	buttonGrant    = "gr"
)

// idLen is the length of ids made by newID.
const idLen = 20

// parseButton splits button data, accepting only the exact shape the
// daemon produces: a known kind, a 20-character lower-case base32 id and a
// one-letter choice.
func parseButton(data string) (kind, id, choice string, ok bool) {
	if len(data) != len(buttonApproval)+1+idLen+2 {
		return "", "", "", false
	}
	kind, rest, _ := strings.Cut(data, ":")
	id, choice, found := strings.Cut(rest, ":")
	if !found || (kind != buttonApproval && kind != buttonAccess && kind != buttonGrant) || len(id) != idLen || len(choice) != 1 {
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
