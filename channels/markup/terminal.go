package markup

import (
	"strings"
	"unicode"
)

// Terminal renders Markdown as text for a terminal (the console channel).
// Formatting marks are dropped as in PlainText: links become
// "label (url)", headings and lists lines, tables "a | b" lines; code
// blocks are indented four spaces and quotations start each line with
// "│ ", so both stay apart from the prose around them. With color set
// (the output is a terminal) bold, italic, strikethrough, code and link
// labels are styled with ANSI SGR sequences; without it the text has none.
//
// Control characters other than newline and tab are replaced with U+FFFD:
// text from the model must not reach the terminal as escape sequences,
// which could rewrite what is on the screen or the window title.
func Terminal(md string, color bool) string {
	doc, src := parse(md)
	var b strings.Builder
	for _, bl := range layoutDoc(doc, src, rules{linkOK: linkOK}) {
		if !piecesVisible(bl.pieces) {
			continue
		}
		if b.Len() > 0 {
			if bl.tight {
				b.WriteString("\n")
			} else {
				b.WriteString("\n\n")
			}
		}
		writeTerminal(&b, bl.pieces, color)
	}
	return strings.TrimRightFunc(b.String(), unicode.IsSpace)
}

// terminalSGR are the ANSI sequences that open and close each style.
var terminalSGR = map[style][2]string{
	styleBold:   {"\x1b[1m", "\x1b[22m"},
	styleItalic: {"\x1b[3m", "\x1b[23m"},
	styleStrike: {"\x1b[9m", "\x1b[29m"},
	styleCode:   {"\x1b[36m", "\x1b[39m"},
	stylePre:    {"\x1b[36m", "\x1b[39m"},
	styleLink:   {"\x1b[4m", "\x1b[24m"},
}

// terminalPrefix starts every line of a code block or quotation.
var terminalPrefix = map[style]string{stylePre: "    ", styleQuote: "│ "}

// writeTerminal writes one block's pieces. The layout never nests a code
// block or a quotation in another, so one line prefix is open at a time.
func writeTerminal(b *strings.Builder, ps []piece, color bool) {
	prefix := ""
	for _, p := range ps {
		switch p.kind {
		case pieceText:
			t := terminalSafe(p.text)
			if prefix != "" {
				t = strings.ReplaceAll(t, "\n", "\n"+prefix)
			}
			b.WriteString(t)
		case pieceOpen:
			if pre, ok := terminalPrefix[p.style]; ok {
				prefix = pre
				b.WriteString(pre)
			}
			if color {
				b.WriteString(terminalSGR[p.style][0])
			}
		case pieceClose:
			if color {
				b.WriteString(terminalSGR[p.style][1])
			}
			if p.style == styleLink && !p.bare {
				b.WriteString(" (" + p.attr + ")")
			}
			if _, ok := terminalPrefix[p.style]; ok {
				prefix = ""
			}
		}
	}
}

// terminalSafe replaces control characters but newline and tab.
func terminalSafe(s string) string {
	if strings.IndexFunc(s, isTerminalControl) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isTerminalControl(r) {
			return unicode.ReplacementChar
		}
		return r
	}, s)
}

func isTerminalControl(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }

// piecesVisible reports whether ps show anything but whitespace.
func piecesVisible(ps []piece) bool {
	for _, p := range ps {
		if p.kind == pieceText && strings.TrimFunc(p.text, unicode.IsSpace) != "" {
			return true
		}
	}
	return false
}
