package markup

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MinLimit is the smallest part size the splitter works with; smaller
// limits are raised to it.
const MinLimit = 16

// split packs spelled blocks into parts of at most limit UTF-16 code units.
// Blocks are kept whole when they fit, joined by a blank line (a newline for
// tight blocks); a block larger than the limit is cut by splitBlock. Parts
// without visible text are dropped.
func split(blocks []spelled, limit int) []string {
	limit = max(limit, MinLimit)
	var parts []string
	var cur strings.Builder
	curN := 0
	flush := func() {
		if curN > 0 {
			parts = append(parts, cur.String())
			cur.Reset()
			curN = 0
		}
	}
	for _, b := range blocks {
		if !b.visible() {
			continue
		}
		s := b.String()
		n := utf16Len(s)
		sep := "\n\n"
		if b.tight {
			sep = "\n"
		}
		switch {
		case curN > 0 && curN+len(sep)+n <= limit:
			cur.WriteString(sep)
			cur.WriteString(s)
			curN += len(sep) + n
		case n <= limit:
			flush()
			cur.WriteString(s)
			curN = n
		default:
			pieces := splitBlock(b.toks, limit)
			if len(pieces) == 0 {
				continue
			}
			flush()
			parts = append(parts, pieces[:len(pieces)-1]...)
			last := pieces[len(pieces)-1]
			cur.WriteString(last)
			curN = utf16Len(last)
		}
	}
	flush()
	return parts
}

// atomKind tells the splitter's units apart.
type atomKind uint8

const (
	atomText atomKind = iota
	atomOpen
	atomClose
)

// breakKind ranks the places a block may be cut.
type breakKind uint8

const (
	breakNone  breakKind = iota
	breakSpace           // a space or tab: cut between words
	breakLine            // a newline: cut between lines
)

// atom is the smallest unit the splitter moves: one character (a surrogate
// pair counts two), one HTML entity, or one span's opening or closing markup.
type atom struct {
	kind   atomKind
	s      string
	n      int // UTF-16 length of s
	brk    breakKind
	close  string // atomOpen: closing markup
	closeN int    // atomOpen: UTF-16 length of close
	pair   int    // atomOpen, atomClose: index of the opening atom
}

// atomize breaks tokens into atoms.
func atomize(toks []token) []atom {
	var atoms []atom
	var opens []int
	for _, t := range toks {
		switch t.kind {
		case tokOpen:
			opens = append(opens, len(atoms))
			atoms = append(atoms, atom{kind: atomOpen, s: t.s, n: utf16Len(t.s),
				close: t.close, closeN: utf16Len(t.close), pair: len(atoms)})
		case tokClose:
			pair := -1
			if len(opens) > 0 {
				pair = opens[len(opens)-1]
				opens = opens[:len(opens)-1]
			}
			atoms = append(atoms, atom{kind: atomClose, s: t.s, pair: pair})
		case tokText:
			atoms = appendTextAtoms(atoms, t.s)
		}
	}
	return atoms
}

// appendTextAtoms appends the atoms of escaped text s.
func appendTextAtoms(atoms []atom, s string) []atom {
	for i := 0; i < len(s); {
		if s[i] == '&' {
			if n := entityLen(s[i:]); n > 0 {
				atoms = append(atoms, atom{s: s[i : i+n], n: n})
				i += n
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		a := atom{s: s[i : i+size], n: 1}
		if r >= 0x10000 {
			a.n = 2
		}
		switch r {
		case '\n':
			a.brk = breakLine
		case ' ', '\t':
			a.brk = breakSpace
		}
		atoms = append(atoms, a)
		i += size
	}
	return atoms
}

// entityLen returns the length of the character reference (&amp;, &#38;)
// at the start of s, or 0 when s does not start with one.
func entityLen(s string) int {
	for i := 1; i < len(s) && i <= 12; i++ {
		c := s[i]
		switch {
		case c == ';':
			if i > 1 {
				return i + 1
			}
			return 0
		case c == '#' && i == 1, c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		default:
			return 0
		}
	}
	return 0
}

// splitBlock cuts one block's tokens into parts of at most limit units.
// Every part closes the spans open at its end and the next part reopens
// them, so each part is well-formed on its own: a code block becomes one
// code block per part. Cuts prefer newlines, then spaces, and never fall
// inside an atom. When a span's markup leaves no room for text (a huge href,
// a tiny limit) the span is dropped and its text kept.
func splitBlock(toks []token, limit int) []string {
	atoms := atomize(toks)
	off := make([]bool, len(atoms)) // spans dropped, by opening atom
	var stack []int                 // opening atoms in effect at pos
	var parts []string
	for pos := 0; pos < len(atoms); {
		// Closing markup at the start of a part closes spans the
		// previous part closed already.
		if a := atoms[pos]; a.kind == atomClose {
			if a.pair >= 0 && !off[a.pair] {
				stack = stack[:len(stack)-1]
			}
			pos++
			continue
		}
		cut, consume := findCut(atoms, off, stack, pos, limit)
		if cut == pos {
			// Nothing fits: drop the span in the way and try again.
			if atoms[pos].kind == atomOpen {
				off[pos] = true
			} else if len(stack) > 0 {
				drop := widest(atoms, stack)
				off[stack[drop]] = true
				stack = append(stack[:drop], stack[drop+1:]...)
			} else {
				cut = pos + 1 // an atom wider than the limit; cannot happen above MinLimit
			}
			if cut == pos {
				continue
			}
		}
		var part string
		part, stack = emit(atoms, off, stack, pos, cut)
		if part != "" {
			parts = append(parts, part)
		}
		pos = cut
		if consume {
			pos++
		}
	}
	return parts
}

// findCut returns where the part starting at pos should end: the part holds
// atoms[pos:cut], and consume says atoms[cut] is the whitespace cut at,
// which belongs to neither part.
func findCut(atoms []atom, off []bool, stack []int, pos, limit int) (cut int, consume bool) {
	cost := 0
	for _, i := range stack {
		cost += atoms[i].n + atoms[i].closeN
	}
	lineAt, spaceAt := -1, -1
	lineCost, spaceCost := 0, 0
	i := pos
	for ; i < len(atoms); i++ {
		a := atoms[i]
		add := 0
		switch a.kind {
		case atomText:
			add = a.n
		case atomOpen:
			if !off[i] {
				add = a.n + a.closeN
			}
		}
		if cost+add > limit {
			break
		}
		if i > pos && atoms[i-1].kind != atomOpen {
			switch a.brk {
			case breakLine:
				lineAt, lineCost = i, cost
			case breakSpace:
				spaceAt, spaceCost = i, cost
			}
		}
		cost += add
	}
	switch {
	case i == len(atoms):
		return i, false
	case lineAt >= 0 && 2*lineCost >= limit:
		return lineAt, true
	case spaceAt >= 0 && 2*spaceCost >= limit:
		return spaceAt, true
	case lineAt >= 0 || spaceAt >= 0:
		return max(lineAt, spaceAt), true
	}
	// A hard cut; opening markup right before it moves to the next part.
	for i > pos && atoms[i-1].kind == atomOpen {
		i--
	}
	return i, false
}

// widest returns the position in stack of the span with the longest markup.
func widest(atoms []atom, stack []int) int {
	best := 0
	for k, i := range stack {
		if atoms[i].n+atoms[i].closeN > atoms[stack[best]].n+atoms[stack[best]].closeN {
			best = k
		}
	}
	return best
}

// emit renders atoms[pos:cut] as one part: the spans in stack reopened
// first, every span still open closed last. It returns the part ("" when it
// shows nothing but whitespace) and the spans open at cut.
func emit(atoms []atom, off []bool, stack []int, pos, cut int) (string, []int) {
	var sb strings.Builder
	for _, i := range stack {
		sb.WriteString(atoms[i].s)
	}
	stack = append([]int(nil), stack...)
	visible := false
	for j := pos; j < cut; j++ {
		a := atoms[j]
		switch a.kind {
		case atomOpen:
			if off[j] {
				continue
			}
			stack = append(stack, j)
		case atomClose:
			if a.pair < 0 || off[a.pair] {
				continue
			}
			stack = stack[:len(stack)-1]
		case atomText:
			if r, _ := utf8.DecodeRuneInString(a.s); !unicode.IsSpace(r) {
				visible = true
			}
		}
		sb.WriteString(a.s)
	}
	for k := len(stack) - 1; k >= 0; k-- {
		sb.WriteString(atoms[stack[k]].close)
	}
	if !visible {
		return "", stack
	}
	return sb.String(), stack
}
