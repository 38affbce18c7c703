package scrub

import (
	"encoding/base64"
	"encoding/hex"
)

// encodings returns the whole-value encodings of secret v that a tool or a
// model could print instead of v itself: standard and URL-safe base64, hex
// (which, normalised, also stands for every byte percent-encoded), and v
// reversed. They are looked for normalised (see normalize), so case and
// padding do not matter.
func encodings(v string) []string {
	b := []byte(v)
	return []string{
		base64.StdEncoding.EncodeToString(b),
		base64.URLEncoding.EncodeToString(b),
		hex.EncodeToString(b),
		reverse(v),
	}
}

// reverse returns s with its runes in reverse order.
func reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}
