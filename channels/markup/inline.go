package markup

import (
	"bufio"
	"bytes"
	"html"
	"strings"

	"github.com/yuin/goldmark/ast"
	extast "github.com/yuin/goldmark/extension/ast"
	gmhtml "github.com/yuin/goldmark/renderer/html"
)

// inlines lays out the inline children of n into l.out.
func (l *layout) inlines(n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		l.inline(c)
	}
}

// inline lays out one inline node.
func (l *layout) inline(n ast.Node) {
	switch n := n.(type) {
	case *ast.Text:
		v := n.Value(l.src)
		if n.IsRaw() {
			l.text(string(v))
		} else {
			l.text(literal(v))
		}
		if n.SoftLineBreak() || n.HardLineBreak() {
			l.text("\n")
		}
	case *ast.String:
		if n.IsRaw() || n.IsCode() {
			l.text(string(n.Value))
		} else {
			l.text(literal(n.Value))
		}
	case *ast.CodeSpan:
		l.codeSpan(codeSpanText(n, l.src))
	case *ast.Emphasis:
		st := styleItalic
		if n.Level >= 2 {
			st = styleBold
		}
		l.span(piece{style: st}, func() { l.inlines(n) })
	case *extast.Strikethrough:
		l.span(piece{style: styleStrike}, func() { l.inlines(n) })
	case *ast.Link:
		l.link(literal(n.Destination), l.plain(n), func() { l.inlines(n) })
	case *ast.Image:
		alt := l.plain(n)
		href := literal(n.Destination)
		if alt == "" && l.rules.linkOK(href) {
			alt = href
		}
		l.link(href, alt, func() { l.text(alt) })
	case *ast.AutoLink:
		label := string(n.Label(l.src))
		href := string(n.URL(l.src))
		if n.AutoLinkType == ast.AutoLinkEmail && !strings.HasPrefix(strings.ToLower(href), "mailto:") {
			href = "mailto:" + href
		}
		l.link(href, label, func() { l.text(label) })
	case *ast.RawHTML:
		for i := range n.Segments.Len() {
			seg := n.Segments.At(i)
			l.text(string(seg.Value(l.src)))
		}
	case *extast.TaskCheckBox:
		if n.IsChecked {
			l.text("☑ ")
		} else {
			l.text("☐ ")
		}
	default:
		l.inlines(n)
	}
}

// text appends literal text.
func (l *layout) text(s string) {
	if s != "" {
		l.out = append(l.out, piece{kind: pieceText, text: s})
	}
}

// has reports whether a span of style st is open.
func (l *layout) has(st style) bool {
	for _, sp := range l.spans {
		if sp.style == st {
			return true
		}
	}
	return false
}

// span lays out body inside a span, unless one of its style is open already.
func (l *layout) span(sp piece, body func()) {
	if l.has(sp.style) {
		body()
		return
	}
	sp.kind = pieceOpen
	l.out = append(l.out, sp)
	l.spans = append(l.spans, sp)
	body()
	l.spans = l.spans[:len(l.spans)-1]
	sp.kind = pieceClose
	l.out = append(l.out, sp)
}

// codeSpan lays out inline code. Code cannot sit inside other spans, so the
// open styles are closed around it and reopened after; inside a link or a
// quotation it is plain text.
func (l *layout) codeSpan(s string) {
	if l.quote || l.has(styleLink) {
		l.text(s)
		return
	}
	for i := len(l.spans) - 1; i >= 0; i-- {
		sp := l.spans[i]
		sp.kind = pieceClose
		l.out = append(l.out, sp)
	}
	l.out = append(l.out,
		piece{kind: pieceOpen, style: styleCode},
		piece{kind: pieceText, text: s},
		piece{kind: pieceClose, style: styleCode})
	for _, sp := range l.spans {
		sp.kind = pieceOpen
		l.out = append(l.out, sp)
	}
}

// link lays out a link with visible text label; body lays out the label.
// Hrefs the platform refuses keep only the label; inside a quotation the
// link becomes "label (href)".
func (l *layout) link(href, label string, body func()) {
	switch {
	case !l.rules.linkOK(href) || l.has(styleLink):
		body()
	case l.quote:
		body()
		if label != href {
			l.text(" (" + href + ")")
		}
	default:
		l.span(piece{style: styleLink, attr: href, bare: label == href || "mailto:"+label == href}, body)
	}
}

// plain returns the visible text of n's inline descendants, unformatted.
func (l *layout) plain(n ast.Node) string {
	saved, savedSpans := l.out, l.spans
	l.out, l.spans = nil, nil
	quote := l.quote
	l.quote = true // code and links as text
	l.inlines(n)
	var b strings.Builder
	for _, p := range l.out {
		if p.kind == pieceText {
			b.WriteString(p.text)
		}
	}
	l.out, l.spans, l.quote = saved, savedSpans, quote
	return b.String()
}

// codeSpanText returns the literal content of inline code.
func codeSpanText(n *ast.CodeSpan, src []byte) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		t, ok := c.(*ast.Text)
		if !ok {
			continue
		}
		v := t.Segment.Value(src)
		if bytes.HasSuffix(v, []byte("\n")) {
			b.Write(v[:len(v)-1])
			b.WriteByte(' ')
		} else {
			b.Write(v)
		}
	}
	return b.String()
}

// literal resolves the backslash escapes and entity references of Markdown
// source text, giving the text a reader sees. goldmark's HTML writer does
// the resolving (and escapes for HTML, which html.UnescapeString undoes).
func literal(v []byte) string {
	if !bytes.ContainsAny(v, `\&`) && !bytes.ContainsRune(v, 0) {
		return string(v)
	}
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	gmhtml.NewWriter().Write(w, v)
	_ = w.Flush() // writes to a bytes.Buffer cannot fail
	return html.UnescapeString(buf.String())
}
