package markup

import (
	"strings"
	"unicode"
)

// dialect spells laid-out pieces in one platform's syntax.
type dialect interface {
	// escape returns literal text in the platform's syntax.
	escape(s string) string
	// tags returns the markup that opens and closes a span.
	tags(p piece) (open, close string)
}

// tokenKind tells escaped text from span markup.
type tokenKind uint8

const (
	tokText tokenKind = iota
	tokOpen
	tokClose
)

// token is a piece spelled in a dialect.
type token struct {
	kind  tokenKind
	s     string // escaped text, or the opening or closing markup
	close string // tokOpen: the markup that closes the span
}

// spelled is a block spelled in a dialect.
type spelled struct {
	toks  []token
	tight bool
}

// String returns the block's markup.
func (b spelled) String() string {
	var sb strings.Builder
	for _, t := range b.toks {
		sb.WriteString(t.s)
	}
	return sb.String()
}

// visible reports whether the block shows anything but whitespace.
func (b spelled) visible() bool {
	for _, t := range b.toks {
		if t.kind == tokText && strings.TrimFunc(t.s, unicode.IsSpace) != "" {
			return true
		}
	}
	return false
}

// spell spells blocks in dialect d.
func spell(bs []block, d dialect) []spelled {
	out := make([]spelled, 0, len(bs))
	for _, b := range bs {
		toks := make([]token, 0, len(b.pieces))
		for _, p := range b.pieces {
			switch p.kind {
			case pieceText:
				toks = append(toks, token{kind: tokText, s: d.escape(p.text)})
			case pieceOpen:
				open, shut := d.tags(p)
				toks = append(toks, token{kind: tokOpen, s: open, close: shut})
			case pieceClose:
				_, shut := d.tags(p)
				toks = append(toks, token{kind: tokClose, s: shut})
			}
		}
		out = append(out, spelled{toks: toks, tight: b.tight})
	}
	return out
}

// utf16Len counts s in UTF-16 code units, the way Telegram measures text.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}
