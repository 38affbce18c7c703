package slack

import "strings"

// streamEscaper keeps Slack's own syntax out of streamed Markdown: a
// zero-width space after every "<" means no <!channel>, <@U…> or <#C…>
// can form, and it maps each rune alone, so the escaped text of a longer
// answer still begins with the escaped text of a shorter one, which
// chat.appendStream needs.
var streamEscaper = strings.NewReplacer("<", "<\u200b")

// streamable is the part of md a stream may show for good: md without a
// closing code fence on its last line. The daemon closes an open fence in
// every text it hands over, and the next text goes on inside that block;
// holding the fence back keeps each text an extension of the one before,
// since a stream can only be appended to. The final text, edited in by
// FinishLive, has its fences.
func streamable(md string) string {
	if i, ok := closingFenceLast(md); ok {
		return md[:i]
	}
	return md
}

// closingFenceLast reports whether md's last non-blank line is a fence
// closing a code block, and where that line starts.
func closingFenceLast(md string) (int, bool) {
	open := "" // the fence run of the code block open at this line, "" outside one
	last := -1 // start of the last line that closed a block
	end := len(strings.TrimRight(md, " \t\r\n"))
	for start := 0; start < end; {
		stop := strings.IndexByte(md[start:], '\n')
		if stop < 0 {
			stop = len(md) - start
		}
		line := strings.TrimRight(md[start:start+stop], " \t\r")
		fence := fenceRun(line)
		switch {
		case open == "" && fence != "":
			open = fence
		case open != "" && fence != "" && strings.HasPrefix(fence, open) && fence == strings.TrimLeft(line, " "):
			open = ""
			last = start
		}
		if start+stop >= end {
			return last, last == start
		}
		start += stop + 1
	}
	return -1, false
}

// fenceRun returns the run of three or more backticks or tildes that opens
// line (after at most three spaces), or "".
func fenceRun(line string) string {
	trimmed := strings.TrimLeft(line, " ")
	if len(line)-len(trimmed) > 3 || len(trimmed) < 3 {
		return ""
	}
	c := trimmed[0]
	if c != '`' && c != '~' {
		return ""
	}
	n := 0
	for n < len(trimmed) && trimmed[n] == c {
		n++
	}
	if n < 3 {
		return ""
	}
	return trimmed[:n]
}
