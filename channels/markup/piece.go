package markup

import "strings"

// style is a kind of span the layout can open.
type style uint8

const (
	styleBold   style = iota + 1
	styleItalic       // emphasis
	styleStrike       // strikethrough
	styleCode         // inline code
	stylePre          // code block; attr is the language, possibly empty
	styleLink         // attr is the href
	styleQuote        // block quotation
)

// pieceKind tells text from span boundaries.
type pieceKind uint8

const (
	pieceText pieceKind = iota
	pieceOpen
	pieceClose
)

// piece is one element of a laid-out block: literal text, or the start or
// the end of a span. Close pieces repeat the style and attr of their open
// piece, so a dialect can spell either on its own.
type piece struct {
	kind  pieceKind
	text  string // pieceText: literal, unescaped text
	style style  // pieceOpen, pieceClose
	attr  string // href (styleLink) or language (stylePre)
	bare  bool   // styleLink: the visible label is the href itself
}

// sameSpan reports whether p and q delimit the same kind of span.
func (p piece) sameSpan(q piece) bool {
	return p.style == q.style && p.attr == q.attr
}

// block is one paragraph-level unit. The splitter prefers to cut between
// blocks, and every block closes all the spans it opens.
type block struct {
	pieces []piece
	tight  bool // joined to the previous block by a newline, not a blank line
}

// tidy drops empty spans (<b></b>), merges a span closed and reopened
// right away (</b><b>) — both of which the layout produces when it moves
// inline code out of the surrounding styles — and joins adjacent text.
func tidy(ps []piece) []piece {
	out := make([]piece, 0, len(ps))
	for _, p := range ps {
		n := len(out)
		switch {
		case p.kind == pieceText && p.text == "":
			continue
		case p.kind == pieceClose && n > 0 && out[n-1].kind == pieceOpen && out[n-1].sameSpan(p):
			out = out[:n-1]
			continue
		case p.kind == pieceOpen && n > 0 && out[n-1].kind == pieceClose && out[n-1].sameSpan(p):
			out = out[:n-1]
			continue
		}
		out = append(out, p)
	}
	return joinText(out)
}

// joinText merges runs of adjacent text pieces.
func joinText(ps []piece) []piece {
	out := ps[:0]
	for i := 0; i < len(ps); {
		if ps[i].kind != pieceText {
			out = append(out, ps[i])
			i++
			continue
		}
		j := i + 1
		for j < len(ps) && ps[j].kind == pieceText {
			j++
		}
		if j == i+1 {
			out = append(out, ps[i])
		} else {
			var b strings.Builder
			for _, t := range ps[i:j] {
				b.WriteString(t.text)
			}
			out = append(out, piece{kind: pieceText, text: b.String()})
		}
		i = j
	}
	return out
}
