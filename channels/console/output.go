package console

import (
	"fmt"
	"io"
	"strings"
)

// Everything written to Out goes through these helpers under c.mu, which
// keep one rule: a line that is not finished (the prompt) is remembered in
// c.open, and whatever comes next starts on a fresh line. That is what
// keeps a log line, written to another stream of the same terminal, from
// landing in the middle of "… working" or of the prompt.

// startLine ends the unfinished line, if any. Callers hold c.mu.
func (c *Channel) startLine() {
	if c.open != "" {
		fmt.Fprintln(c.o.Out)
		c.open = ""
	}
}

// writeLines writes s and ends its last line. Callers hold c.mu.
func (c *Channel) writeLines(s string) {
	fmt.Fprint(c.o.Out, strings.TrimSuffix(s, "\n")+"\n")
}

// writePrompt shows the prompt, an unfinished line. Callers hold c.mu.
func (c *Channel) writePrompt() {
	fmt.Fprint(c.o.Out, c.o.Prompt)
	c.open = c.o.Prompt
}

// prompt shows the prompt on a fresh line.
func (c *Channel) prompt() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.startLine()
	c.writePrompt()
}

// say prints a short note of the console's own, then the prompt.
func (c *Channel) say(text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.noteLocked(text)
}

// LogWriter returns a writer for the daemon's log lines that go to w (the
// same terminal's stderr, say): each write starts on a fresh line of the
// terminal and the unfinished line (the prompt) is shown again after it,
// so log lines and the conversation never share a line. slog writes one
// record per Write.
func (c *Channel) LogWriter(w io.Writer) io.Writer { return logWriter{c: c, w: w} }

type logWriter struct {
	c *Channel
	w io.Writer
}

// Write implements io.Writer.
func (l logWriter) Write(p []byte) (int, error) {
	l.c.mu.Lock()
	defer l.c.mu.Unlock()
	open := l.c.open
	l.c.startLine()
	n, err := l.w.Write(p)
	if open != "" {
		fmt.Fprint(l.c.o.Out, open)
		l.c.open = open
	}
	return n, err
}
