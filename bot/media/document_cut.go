package media

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// pageBreak is what pdftotext writes after each page.
const pageBreak = '\f'

// cutter reads a text stream rune by rune, skips the first skip runes of
// what it renders and keeps the next limit. With pages (firstPage > 0),
// each page the stream's form feeds separate is rendered with a
// "[page N]" line before it, and the cutter knows which page, and how far
// into it, it stopped.
type cutter struct {
	skip, limit int
	paged       bool

	page    int  // the page being rendered
	inPage  int  // runes rendered since the page's marker
	pending bool // the page's marker is not rendered yet
	pos     int  // runes rendered in all
	out     strings.Builder
	taken   int
	more    bool
}

// cut reads r and returns the runes skip..skip+limit of its rendering;
// firstPage is the number of r's first page, or 0 for a stream without
// pages. It stops reading as soon as it knows there is more.
func cut(r io.Reader, skip, limit, firstPage int) (Excerpt, error) {
	c := &cutter{skip: skip, limit: limit, paged: firstPage > 0, page: firstPage, pending: firstPage > 0}
	br := bufio.NewReader(r)
	for !c.more {
		ch, _, err := br.ReadRune() // an invalid byte reads as U+FFFD
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Excerpt{}, fmt.Errorf("media: read document: %w", err)
		}
		c.feed(ch)
	}
	ex := Excerpt{Text: c.out.String(), More: c.more}
	if c.more {
		if c.paged {
			ex.NextPage, ex.NextOffset = c.page, c.inPage
		} else {
			ex.NextOffset = c.pos
		}
	}
	return ex, nil
}

// feed renders one rune of the stream.
func (c *cutter) feed(ch rune) {
	if c.paged && ch == pageBreak {
		c.page++
		c.inPage = 0
		c.pending = true
		return
	}
	if c.pending {
		c.pending = false
		// The same for every window, so offsets agree between reads.
		for _, m := range fmt.Sprintf("[page %d]\n", c.page) {
			c.emit(m)
		}
	}
	c.emit(ch)
}

// emit renders one rune: skipped, kept, or the sign there is more.
func (c *cutter) emit(ch rune) {
	if c.more {
		return
	}
	if c.pos >= c.skip {
		if c.taken == c.limit {
			c.more = true
			return
		}
		c.out.WriteRune(ch)
		c.taken++
	}
	c.pos++
	c.inPage++
}
