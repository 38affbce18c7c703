package markup

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/yuin/goldmark/ast"
	extast "github.com/yuin/goldmark/extension/ast"
)

// rules holds the platform choices the layout cannot make alone.
type rules struct {
	// linkOK reports whether href may become a link; other links keep only
	// their label.
	linkOK func(href string) bool
}

// layout turns a goldmark AST into blocks of pieces. It applies the nesting
// rules chat platforms share (Telegram's are the strictest):
//   - code and code blocks contain only text;
//   - links do not nest and contain no code;
//   - block quotations do not nest and contain only bold, italic and
//     strikethrough: links inside them become "label (href)" text, code
//     becomes plain text;
//   - a style already open is not opened again.
type layout struct {
	src   []byte
	rules rules
	out   []piece // the block being built
	spans []piece // open inline spans, outermost first
	quote bool    // inside a block quotation
}

// layoutDoc lays out a parsed document.
func layoutDoc(doc ast.Node, src []byte, r rules) []block {
	l := &layout{src: src, rules: r}
	bs := l.children(doc, 0)
	for i := range bs {
		bs[i].pieces = tidy(bs[i].pieces)
	}
	return bs
}

// children lays out the block children of n; depth is the list nesting level.
func (l *layout) children(n ast.Node, depth int) []block {
	var out []block
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		out = append(out, l.node(c, depth)...)
	}
	return out
}

// node lays out one block-level node.
func (l *layout) node(n ast.Node, depth int) []block {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		return l.inlineBlock(n, nil)
	case *ast.Heading:
		return l.inlineBlock(n, &piece{style: styleBold})
	case *ast.ThematicBreak:
		return textBlock("———")
	case *ast.FencedCodeBlock:
		return l.code(l.lines(n), language(string(n.Language(l.src))))
	case *ast.CodeBlock:
		return l.code(l.lines(n), "")
	case *ast.HTMLBlock:
		s := l.lines(n)
		if n.HasClosure() {
			s += string(n.ClosureLine.Value(l.src))
		}
		return textBlock(strings.TrimRight(s, "\n"))
	case *ast.Blockquote:
		return l.blockquote(n, depth)
	case *ast.List:
		return l.list(n, depth)
	case *extast.Table:
		return l.table(n)
	}
	if n.Type() == ast.TypeBlock && n.HasChildren() && n.FirstChild().Type() == ast.TypeBlock {
		return l.children(n, depth)
	}
	return l.inlineBlock(n, nil)
}

// inlineBlock lays out the inline children of n as one block, inside wrap
// when it is set.
func (l *layout) inlineBlock(n ast.Node, wrap *piece) []block {
	l.out, l.spans = nil, nil
	if wrap != nil {
		l.span(*wrap, func() { l.inlines(n) })
	} else {
		l.inlines(n)
	}
	return []block{{pieces: l.out}}
}

// textBlock is a block of literal text.
func textBlock(s string) []block {
	if s == "" {
		return nil
	}
	return []block{{pieces: []piece{{kind: pieceText, text: s}}}}
}

// lines returns the raw source lines of a leaf block.
func (l *layout) lines(n ast.Node) string {
	var b strings.Builder
	lines := n.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		b.Write(seg.Value(l.src))
	}
	return b.String()
}

// languagePattern is a code block's language that is a plain name.
var languagePattern = regexp.MustCompile(`^[A-Za-z0-9_+#.-]{1,32}$`)

// language keeps a code block's language only when it is a plain name.
func language(s string) string {
	if languagePattern.MatchString(s) {
		return s
	}
	return ""
}

// code lays out a code block. Inside a quotation it is plain text, since
// quotations cannot contain code.
func (l *layout) code(body, lang string) []block {
	body = strings.TrimRight(body, "\n")
	if strings.TrimSpace(body) == "" {
		return nil
	}
	if l.quote {
		return textBlock(body)
	}
	open := piece{kind: pieceOpen, style: stylePre, attr: lang}
	shut := open
	shut.kind = pieceClose
	return []block{{pieces: []piece{open, {kind: pieceText, text: body}, shut}}}
}

// blockquote lays out a quotation as one block. Nested quotations are
// flattened into the outer one.
func (l *layout) blockquote(n ast.Node, depth int) []block {
	outer := l.quote
	l.quote = true
	inner := l.children(n, depth)
	l.quote = outer
	ps := join(inner, "\n")
	if len(ps) == 0 {
		return nil
	}
	if outer {
		return []block{{pieces: ps}}
	}
	open := piece{kind: pieceOpen, style: styleQuote}
	shut := piece{kind: pieceClose, style: styleQuote}
	return []block{{pieces: append(append([]piece{open}, ps...), shut)}}
}

// join concatenates blocks into one piece list, separated by sep.
func join(bs []block, sep string) []piece {
	var out []piece
	for i, b := range bs {
		if i > 0 {
			out = append(out, piece{kind: pieceText, text: sep})
		}
		out = append(out, b.pieces...)
	}
	return out
}

// maxIndent caps list indentation, so deep nesting cannot blow a short
// message up into a long one.
const maxIndent = 6

// indent is the prefix of a list line at depth.
func indent(depth int) string { return strings.Repeat("  ", min(depth, maxIndent)) }

// list lays out a list as one block per item: "• item" or "1. item" lines,
// nested lists indented below their item.
func (l *layout) list(n *ast.List, depth int) []block {
	var out []block
	num := n.Start
	for item := n.FirstChild(); item != nil; item = item.NextSibling() {
		marker := "• "
		if n.IsOrdered() {
			marker = fmt.Sprintf("%d. ", num)
			num++
		}
		ps := []piece{{kind: pieceText, text: indent(depth) + marker}}
		first := true
		for c := item.FirstChild(); c != nil; c = c.NextSibling() {
			for _, cb := range l.node(c, depth+1) {
				if !first {
					sep := "\n" + indent(depth+1)
					if _, nested := c.(*ast.List); nested {
						sep = "\n"
					}
					ps = append(ps, piece{kind: pieceText, text: sep})
				}
				ps = append(ps, cb.pieces...)
				first = false
			}
		}
		out = append(out, block{pieces: ps, tight: len(out) > 0})
	}
	return out
}

// table lays out a table as plain text, one "a | b | c" line per row.
func (l *layout) table(n ast.Node) []block {
	var out []block
	for row := n.FirstChild(); row != nil; row = row.NextSibling() {
		var cells []string
		for cell := row.FirstChild(); cell != nil; cell = cell.NextSibling() {
			cells = append(cells, strings.TrimSpace(l.plain(cell)))
		}
		line := strings.Join(cells, " | ")
		if strings.TrimSpace(line) == "" {
			continue
		}
		out = append(out, block{pieces: []piece{{kind: pieceText, text: line}}, tight: len(out) > 0})
	}
	return out
}
