package markup

import (
	"bytes"

	"github.com/yuin/goldmark/ast"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// GFM tables and task lists are parsed here rather than by goldmark's
// extension package: that package's initialisation compiles Linkify's two URL
// patterns (a {1,256} repetition each), which switchboard never uses, in every
// process: 2.4–3.6 ms of each start on a slow guest, ~264 KB allocated and
// ~51 KB kept for the life of the process (docs/benchmarks.md, twenty-eighth
// round). The nodes are goldmark's own (extension/ast), built the way its
// extension builds them; gfm_test.go checks the two parse alike.

// tableParagraphs turns a paragraph that holds a GFM table (a header row, a
// delimiter row such as |---|:--:|, then body rows) into a table node. Lines
// of the paragraph before the header row stay a paragraph.
type tableParagraphs struct{}

// Transform implements parser.ParagraphTransformer.
func (tableParagraphs) Transform(p *ast.Paragraph, reader text.Reader, pc parser.Context) {
	lines := p.Lines()
	src := reader.Source()
	for i := 1; i < lines.Len(); i++ {
		delim := lines.At(i)
		align := delimiterRow(delim.Value(src))
		if align == nil {
			continue
		}
		var pipes []int // escaped pipes in code spans, kept if this is a table
		header := tableRow(lines.At(i-1), align, true, src, &pipes)
		if header.ChildCount() != len(align) {
			return
		}
		table := extast.NewTable()
		table.Alignments = align
		table.SetPos(p.Pos())
		table.AppendChild(table, extast.NewTableHeader(header))
		for j := i + 1; j < lines.Len(); j++ {
			table.AppendChild(table, tableRow(lines.At(j), align, false, src, &pipes))
		}
		if len(pipes) > 0 {
			at := pc.ComputeIfAbsent(codePipesKey, func() any { return map[int]bool{} }).(map[int]bool)
			for _, pos := range pipes {
				at[pos] = true
			}
		}
		parent := p.Parent()
		lines.SetSliced(0, i-1)
		parent.InsertAfter(parent, p, table)
		if lines.Len() == 0 {
			parent.RemoveChild(parent, p)
		}
		// goldmark then trims the newline off the paragraph's last line.
		return
	}
}

// delimiterRow returns the column alignments of a table's delimiter row
// (cells of dashes with a colon at either end or both, indented at most three
// columns), or nil when line is not one.
func delimiterRow(line []byte) []extast.Alignment {
	if w, _ := util.IndentWidth(line, 0); w > 3 {
		return nil
	}
	dashesOnly := true
	for _, b := range line {
		if b != '-' {
			dashesOnly = false
		}
		if !util.IsSpace(b) && b != '-' && b != '|' && b != ':' {
			return nil
		}
	}
	if dashesOnly {
		return nil
	}
	cols := bytes.Split(line, []byte{'|'})
	if util.IsBlank(cols[0]) {
		cols = cols[1:]
	}
	if len(cols) > 0 && util.IsBlank(cols[len(cols)-1]) {
		cols = cols[:len(cols)-1]
	}
	var align []extast.Alignment
	for _, c := range cols {
		c = util.TrimRightSpace(util.TrimLeftSpace(c))
		left, right := bytes.HasPrefix(c, []byte{':'}), bytes.HasSuffix(c, []byte{':'})
		dashes := c
		if left {
			dashes = dashes[1:]
		}
		if right && len(dashes) > 0 {
			dashes = dashes[:len(dashes)-1]
		}
		if len(dashes) == 0 || len(bytes.Trim(dashes, "-")) != 0 {
			return nil
		}
		switch {
		case left && right:
			align = append(align, extast.AlignCenter)
		case left:
			align = append(align, extast.AlignLeft)
		case right:
			align = append(align, extast.AlignRight)
		default:
			align = append(align, extast.AlignNone)
		}
	}
	return align
}

// tableRow splits one line of a table into cells at the pipes that are not
// escaped. A header keeps every cell (the caller compares their count with
// the delimiter row's); a body row drops cells beyond the header's and is
// padded with empty ones to its width. The backslash of a pipe escaped
// after a backtick is added to pipes (for tableCodePipes).
func tableRow(seg text.Segment, align []extast.Alignment, header bool, src []byte, pipes *[]int) *extast.TableRow {
	row := extast.NewTableRow(align)
	row.SetPos(seg.Start)
	seg = seg.TrimLeftSpace(src)
	seg = seg.TrimRightSpace(src)
	line := seg.Value(src)
	pos, limit := 0, len(line)
	if limit > 0 && line[0] == '|' {
		pos++
	}
	if limit > pos && line[limit-1] == '|' {
		limit--
	}
	n := 0
	for ; pos < limit; n++ {
		cell := extast.NewTableCell()
		if n < len(align) {
			cell.Alignment = align[n]
		} else if !header {
			return row
		}
		end, backtick := pos, false
		for ; end < limit; end++ {
			if line[end] == '`' {
				backtick = true
			}
			if line[end] != '|' {
				continue
			}
			if end == 0 || line[end-1] != '\\' {
				break
			}
			if backtick {
				*pipes = append(*pipes, seg.Start+end-1)
			}
		}
		content := text.NewSegment(seg.Start+pos, seg.Start+end)
		content = content.TrimLeftSpace(src)
		content = content.TrimRightSpace(src)
		cell.Lines().Append(content)
		row.AppendChild(row, cell)
		pos = end + 1
	}
	for ; n < len(align); n++ {
		row.AppendChild(row, extast.NewTableCell())
	}
	return row
}

// codePipesKey keeps, in a parse's context, where the backslashes of pipes
// escaped inside a table's code spans are (a map[int]bool of source
// offsets), so that tableCodePipes can take them out.
var codePipesKey = parser.NewContextKey()

// tableCodePipes takes the backslash out of `a\|b` inside a table cell: GFM
// escapes a pipe in a cell even inside a code span, where a backslash is
// otherwise kept.
type tableCodePipes struct{}

// Transform implements parser.ASTTransformer.
func (tableCodePipes) Transform(doc *ast.Document, _ text.Reader, pc parser.Context) {
	at, _ := pc.Get(codePipesKey).(map[int]bool)
	if at == nil {
		return
	}
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		t, ok := n.(*ast.Text)
		if !entering || !ok {
			return ast.WalkContinue, nil
		}
		if _, inCode := t.Parent().(*ast.CodeSpan); !inCode {
			return ast.WalkContinue, nil
		}
		for pos := t.Segment.Start; pos < t.Segment.Stop; pos++ {
			if !at[pos] {
				continue
			}
			// Split the text around the backslash, dropping it.
			rest := ast.NewRawTextSegment(t.Segment.WithStart(pos + 1))
			rest.SetSoftLineBreak(t.SoftLineBreak())
			rest.SetHardLineBreak(t.HardLineBreak())
			t.Segment = t.Segment.WithStop(pos)
			t.SetSoftLineBreak(false)
			t.SetHardLineBreak(false)
			t.Parent().InsertAfter(t.Parent(), t, rest)
			return ast.WalkContinue, nil // rest is walked next
		}
		return ast.WalkContinue, nil
	})
}

// taskBoxes parses the [ ] or [x] that opens a list item as a task list's
// check box.
type taskBoxes struct{}

// Trigger implements parser.InlineParser.
func (taskBoxes) Trigger() []byte { return []byte{'['} }

// Parse implements parser.InlineParser.
func (taskBoxes) Parse(parent ast.Node, block text.Reader, _ parser.Context) ast.Node {
	// Only first in the first block of a list item.
	item, ok := parent.Parent().(*ast.ListItem)
	if !ok || item.FirstChild() != parent || parent.HasChildren() {
		return nil
	}
	line, _ := block.PeekLine()
	if len(line) < 3 || line[0] != '[' || line[2] != ']' {
		return nil
	}
	var checked bool
	switch {
	case line[1] == 'x' || line[1] == 'X':
		checked = true
	case !isSpace(line[1]):
		return nil
	}
	n := 3
	for n < len(line) && isSpace(line[n]) {
		n++
	}
	block.Advance(n)
	return extast.NewTaskCheckBox(checked)
}

// isSpace reports whether b is white space as a regular expression's \s
// means it (goldmark's task list pattern is `^\[([\sxX])\]\s*`).
func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\f' || b == '\r'
}
