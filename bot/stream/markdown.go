package stream

import "strings"

// fence is the Markdown code fence whose balance the live text keeps.
const fence = "```"

// balanced closes a code fence that text leaves open, so that half an
// answer renders as it will when complete: an open block as code, not
// as stray backticks.
func balanced(text string) string {
	if openFence(text, false) {
		return text + "\n" + fence
	}
	return text
}

// openFence reports whether text ends inside a code block, given whether
// it began inside one.
func openFence(text string, open bool) bool {
	for line := range strings.Lines(text) {
		if strings.HasPrefix(strings.TrimLeft(line, " "), fence) {
			open = !open
		}
	}
	return open
}

// chunks cuts text into pieces of at most limit runes, each a live
// message, preferring a line break, then a space, near the end of each.
// Each piece is balanced on its own: a code block cut in two is closed at
// the end of the first piece and opened again at the start of the next.
func chunks(text string, limit int) []string {
	const fenceRoom = len(fence) + 2 // the closing fence a piece may need
	if limit <= fenceRoom+1 {
		limit = fenceRoom + 2
	}
	var out []string
	open := false
	for text != "" {
		prefix := ""
		if open {
			prefix = fence + "\n"
		}
		piece := cut(text, limit-fenceRoom-len([]rune(prefix)))
		text = text[len(piece):]
		open = openFence(piece, open)
		piece = prefix + piece
		if open {
			piece += "\n" + fence
		}
		out = append(out, piece)
	}
	return out
}

// cut returns the longest head of text of at most n runes that ends at a
// line break, else at a space, else at n runes.
func cut(text string, n int) string {
	if n < 1 {
		n = 1
	}
	r := []rune(text)
	if len(r) <= n {
		return text
	}
	head := string(r[:n])
	if i := strings.LastIndexByte(head, '\n'); i > len(head)/2 {
		return head[:i+1]
	}
	if i := strings.LastIndexByte(head, ' '); i > len(head)/2 {
		return head[:i+1]
	}
	return head
}
