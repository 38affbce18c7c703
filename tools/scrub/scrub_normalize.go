package scrub

import (
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// minNormalizedLen is the shortest secret (in letters and digits) looked
// for in normalised text; shorter ones would match ordinary words.
const minNormalizedLen = 8

// maxSpreadPerRune bounds how far apart a normalised match's letters may
// lie in the original text (bytes per secret letter): a secret with a
// space, a zero-width character or Markdown between its letters matches,
// letters scattered over a paragraph do not.
const maxSpreadPerRune = 8

// normalize keeps the letters and digits of s, case-folded: the form in
// which a secret is looked for when it was re-cased, split over lines, or
// interleaved with spaces, punctuation, Markdown or invisible characters.
func normalize(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// normalizedText is text's letters and digits, case-folded, with the byte
// span of each in text.
type normalizedText struct {
	norm       []byte
	start, end []int32 // byte span in text of norm's i-th byte's rune
}

// newNormalizedText indexes text.
func newNormalizedText(text string) *normalizedText {
	n := &normalizedText{}
	n.index(text)
	return n
}

// normalizedTexts are indexes of short texts for reuse: Scrub looks at
// every message, most of them short and ordinary, and an index takes nine
// bytes per byte of text.
var normalizedTexts = sync.Pool{New: func() any { return new(normalizedText) }}

// maxPooledText is the longest text whose index goes back to the pool.
const maxPooledText = 16 << 10

// withNormalizedText runs f with an index of text, reused when text is short.
func withNormalizedText[T any](text string, f func(*normalizedText) T) T {
	if len(text) > maxPooledText {
		return f(newNormalizedText(text))
	}
	n := normalizedTexts.Get().(*normalizedText)
	defer normalizedTexts.Put(n)
	n.index(text)
	return f(n)
}

// index makes n the index of text, reusing n's room.
func (n *normalizedText) index(text string) {
	n.norm = slices.Grow(n.norm[:0], len(text))
	n.start = slices.Grow(n.start[:0], len(text))
	n.end = slices.Grow(n.end[:0], len(text))
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			switch {
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
				n.add(c, i, i+1)
			case 'A' <= c && c <= 'Z':
				n.add(c+'a'-'A', i, i+1)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			var buf [utf8.UTFMax]byte
			k := utf8.EncodeRune(buf[:], unicode.ToLower(r))
			for j := range k {
				n.add(buf[j], i, i+size)
			}
		}
		i += size
	}
}

func (n *normalizedText) add(c byte, start, end int) {
	n.norm = append(n.norm, c)
	n.start = append(n.start, int32(start))
	n.end = append(n.end, int32(end))
}

// span is a byte range of the original text to redact.
type span struct{ start, end int }

// secretIndex finds many normalised secrets in one pass: each secret is
// keyed by its first four bytes, and a 64 Ki-bit filter of those keys
// rejects almost every position of ordinary text with one bit test.
type secretIndex struct {
	filter [1 << 10]uint64
	byKey  map[uint32][]string
}

func newSecretIndex(secrets []string) *secretIndex {
	x := &secretIndex{byKey: map[uint32][]string{}}
	for _, s := range secrets {
		k := key4(s)
		h := hash16(k)
		x.filter[h>>6] |= 1 << (h & 63)
		x.byKey[k] = append(x.byKey[k], s)
	}
	return x
}

func key4(s string) uint32 {
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

func hash16(k uint32) uint32 { return (k * 2654435761) >> 16 }

// find appends the original spans where a secret occurs in n with its
// letters close together (see maxSpreadPerRune).
func (x *secretIndex) find(n *normalizedText, out []span) []span {
	norm := n.norm
	for i := 0; i+minNormalizedLen <= len(norm); i++ {
		k := uint32(norm[i]) | uint32(norm[i+1])<<8 | uint32(norm[i+2])<<16 | uint32(norm[i+3])<<24
		h := hash16(k)
		if x.filter[h>>6]&(1<<(h&63)) == 0 {
			continue
		}
		for _, s := range x.byKey[k] {
			if i+len(s) > len(norm) || string(norm[i:i+len(s)]) != s {
				continue
			}
			st, e := int(n.start[i]), int(n.end[i+len(s)-1])
			if e-st <= maxSpreadPerRune*len(s) {
				out = append(out, span{st, e})
			}
		}
	}
	return out
}

// redactSpans replaces the (possibly overlapping) spans of text with
// Redacted, once per run of overlapping spans.
func redactSpans(text string, spans []span) string {
	if len(spans) == 0 {
		return text
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	var b strings.Builder
	b.Grow(len(text))
	pos, cur := 0, spans[0]
	flush := func() {
		b.WriteString(text[pos:cur.start])
		b.WriteString(Redacted)
		pos = cur.end
	}
	for _, sp := range spans[1:] {
		if sp.start < cur.end {
			cur.end = max(cur.end, sp.end)
			continue
		}
		flush()
		cur = sp
	}
	flush()
	b.WriteString(text[pos:])
	return b.String()
}

// any reports whether a secret of x occurs in text's normalised form.
func (x *secretIndex) any(text string) bool {
	if x == nil || len(x.byKey) == 0 {
		return false
	}
	return withNormalizedText(text, func(n *normalizedText) bool { return len(x.find(n, nil)) > 0 })
}

// scrubNormalized redacts every secret of x found in text's normalised
// form.
func scrubNormalized(text string, x *secretIndex) string {
	if x == nil || len(x.byKey) == 0 {
		return text
	}
	spans := withNormalizedText(text, func(n *normalizedText) []span { return x.find(n, nil) })
	return redactSpans(text, spans)
}
