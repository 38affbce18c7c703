package media

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// pdfTimeout bounds one pdftotext run: a hostile PDF (endless objects, a
// decompression bomb) is stopped, not waited on.
const pdfTimeout = 30 * time.Second

// maxToolStderr bounds what is kept of a helper program's error output.
const maxToolStderr = 4 << 10

// ErrNoPDFReader is returned when poppler's pdftotext is not installed.
var ErrNoPDFReader = errors.New("PDFs cannot be read here: install poppler-utils (pdftotext) to read PDFs")

// pdfText reads window w of PDF f with pdftotext. The file goes to it as
// an open descriptor (/dev/fd/3), not a path, so what it reads is the
// file the caller checked; no shell is involved. Its output is read only
// as far as w needs, then it is stopped.
func pdfText(ctx context.Context, f *os.File, w Window) (Excerpt, error) {
	bin, err := exec.LookPath("pdftotext")
	if err != nil {
		return Excerpt{}, ErrNoPDFReader
	}
	first := max(w.FirstPage, 1)
	args := []string{"-enc", "UTF-8", "-f", strconv.Itoa(first)}
	if w.LastPage > 0 {
		args = append(args, "-l", strconv.Itoa(w.LastPage))
	}
	args = append(args, "/dev/fd/3", "-")

	ctx, cancel := context.WithTimeout(ctx, pdfTimeout)
	defer cancel()
	cmd := helperCommand(ctx, bin, args, f)
	var stderr bytes.Buffer
	cmd.Stderr = &capped{w: &stderr, left: maxToolStderr}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return Excerpt{}, fmt.Errorf("media: pdftotext: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return Excerpt{}, fmt.Errorf("media: start pdftotext: %w", err)
	}
	ex, readErr := cut(out, w.Offset, w.Limit, first)
	if ex.More {
		cancel() // the rest is not needed
	}
	waitErr := cmd.Wait()
	switch {
	case ex.More:
		return ex, nil
	case ctx.Err() != nil:
		return Excerpt{}, fmt.Errorf("reading the PDF took longer than %s; it may be damaged or hostile, or try fewer pages", pdfTimeout)
	case waitErr != nil:
		return Excerpt{}, fmt.Errorf("this PDF cannot be read (pdftotext: %s); it may be damaged or not a PDF", firstLine(stderr.String(), waitErr))
	case readErr != nil:
		return Excerpt{}, readErr
	}
	return ex, nil
}

// helperCommand runs the program bin with file as descriptor 3, in an
// empty environment (no daemon secret reaches it), and is killed when ctx
// ends; WaitDelay keeps a child that holds the pipes open from hanging
// Wait.
func helperCommand(ctx context.Context, bin string, args []string, file *os.File) *exec.Cmd {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.ExtraFiles = []*os.File{file}
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C.UTF-8"}
	cmd.WaitDelay = 2 * time.Second
	return cmd
}

// firstLine returns the first line of a helper's error output, or err.
func firstLine(stderr string, err error) string {
	line, _, _ := strings.Cut(strings.TrimSpace(stderr), "\n")
	if line == "" {
		return err.Error()
	}
	return line
}

// capped writes at most left more bytes to w and drops the rest; over
// tells that some were dropped.
type capped struct {
	w    *bytes.Buffer
	left int
	over bool
}

// Write implements io.Writer; it never fails, so the program is not
// stopped for talking too much.
func (c *capped) Write(p []byte) (int, error) {
	n := min(len(p), c.left)
	c.w.Write(p[:n])
	c.left -= n
	c.over = c.over || n < len(p)
	return len(p), nil
}
