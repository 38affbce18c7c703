package markup

import "strings"

// PlainText renders Markdown as readable plain text: formatting marks
// dropped, links as "label (url)", lists and headings as lines. Use it where
// a platform refuses formatted text.
func PlainText(md string) string {
	doc, src := parse(md)
	blocks := spell(layoutDoc(doc, src, rules{linkOK: linkOK}), plainDialect{})
	var b strings.Builder
	for _, bl := range blocks {
		if !bl.visible() {
			continue
		}
		if b.Len() > 0 {
			if bl.tight {
				b.WriteString("\n")
			} else {
				b.WriteString("\n\n")
			}
		}
		b.WriteString(bl.String())
	}
	return strings.TrimSpace(b.String())
}

// plainDialect spells pieces as plain text.
type plainDialect struct{}

// escape implements dialect.
func (plainDialect) escape(s string) string { return s }

// tags implements dialect.
func (plainDialect) tags(p piece) (open, close string) {
	if p.style == styleLink && !p.bare {
		return "", " (" + p.attr + ")"
	}
	return "", ""
}
