// Package mediatest makes small real media files for tests: files the
// tools that read them (pdftotext, the image decoders) accept, so a test
// shows what a person's real file does.
package mediatest

import (
	"fmt"
	"strings"
)

// MinimalPDF returns a PDF with one page per text, each showing its text
// in Helvetica: the smallest file pdftotext reads.
func MinimalPDF(pages ...string) []byte {
	n := len(pages)
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"", // the page tree, once the page objects are numbered
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	}
	var kids []string
	for i, text := range pages {
		page, content := 4+2*i, 5+2*i
		kids = append(kids, fmt.Sprintf("%d 0 R", page))
		stream := fmt.Sprintf("BT /F1 12 Tf 72 720 Td (%s) Tj ET", text)
		objs = append(objs,
			fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", content),
			fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(stream), stream))
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), n)
	var b strings.Builder
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return []byte(b.String())
}
