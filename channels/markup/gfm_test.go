package markup

import (
	"fmt"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// goldmarkGFM parses as parse did with goldmark's own table and task list
// extensions (only tests import goldmark/extension).
func goldmarkGFM(md string) string {
	src := []byte(sanitizer.Replace(strings.ToValidUTF8(md, "\uFFFD")))
	p := goldmark.New(
		goldmark.WithExtensions(extension.Table, extension.TaskList),
		goldmark.WithParserOptions(parser.WithInlineParsers(util.Prioritized(strikeParser{}, 500))),
	).Parser()
	return shape(p.Parse(text.NewReader(src)), src)
}

// ours is parse's tree in the same form.
func ours(md string) string {
	doc, src := parse(md)
	return shape(doc, src)
}

// shape writes a tree as one line per node: its kind, depth and what the
// renderers read (text, alignments, check marks).
func shape(doc ast.Node, src []byte) string {
	var b strings.Builder
	depth := 0
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			depth--
			return ast.WalkContinue, nil
		}
		fmt.Fprintf(&b, "%s%s", strings.Repeat(" ", depth), n.Kind())
		depth++
		switch n := n.(type) {
		case *ast.Text:
			fmt.Fprintf(&b, " %q raw=%v soft=%v hard=%v", n.Segment.Value(src), n.IsRaw(), n.SoftLineBreak(), n.HardLineBreak())
		case *ast.String:
			fmt.Fprintf(&b, " %q", n.Value)
		case *extast.Table:
			fmt.Fprintf(&b, " %v", n.Alignments)
		case *extast.TableCell:
			fmt.Fprintf(&b, " %v", n.Alignment)
		case *extast.TaskCheckBox:
			fmt.Fprintf(&b, " checked=%v", n.IsChecked)
		}
		if n.Type() == ast.TypeBlock {
			for i := range n.Lines().Len() {
				seg := n.Lines().At(i)
				fmt.Fprintf(&b, " line=%q", seg.Value(src))
			}
		}
		b.WriteByte('\n')
		return ast.WalkContinue, nil
	})
	return b.String()
}

// gfmCases are tables and task lists at their edges.
var gfmCases = []string{
	"| a | b |\n|---|---|\n| 1 | **2** |",
	"a | b\n--- | ---\n1 | 2",
	"| left | centre | right | none |\n|:-----|:------:|------:|------|\n| 1 | 2 | 3 | 4 |",
	"text before\nmore text\n| a | b |\n|---|---|\n| 1 | 2 |\n\nafter",
	"| a | b |\n|---|---|---|\n| 1 | 2 |",                 // header narrower than the delimiter row
	"| a | b | c |\n|---|---|\n| 1 | 2 |",                 // header wider: not a table
	"| a | b |\n|---|---|\n| 1 | 2 | 3 | 4 |\n| 5 |",      // body rows cut and padded
	"| a |\n|---|\n| `x \\| y` | more |\n| \\| esc |",     // escaped pipes, in and out of code
	"| `a\\|b\\|c` | d |\n|---|---|\n| `e\\|f` | g\\|h |", // several escaped pipes in code
	"| a | b |\n| --- | :-: |\n",
	"| a | b |\n|- -|---|\n| 1 | 2 |", // not a delimiter row
	"| a | b |\n|:--:|::|\n| 1 | 2 |",
	"| a | b |\n    |---|---|\n| 1 | 2 |", // indented four columns
	"| a | b |\n|---|---|x\n| 1 | 2 |",
	"a\n---",         // a setext heading, not a table
	"| a |\n| - |\n", // one column
	"|\n|-|\n|",
	"||\n|-|-|\n||",
	"> | a | b |\n> |---|---|\n> | 1 | 2 |",
	"- | a | b |\n  |---|---|\n  | 1 | 2 |",
	"- [ ] open\n- [x] done\n- [X] Done\n- [y] not a box\n- [] neither\n-  [ ]   spaced",
	"- [ ]\n- [x]",
	"1. [x] numbered\n2. text [ ] inside",
	"- para\n\n  [ ] second paragraph",
	"- **[x]** bold first",
	"[x] not in a list",
	"- [\t] tab\n- [\f] form feed\n- [\v] vertical tab",
	"- [x]no space\n- [ ]\tafter tab",
	"- [ ] [link](https://x.io)\n- [x] ~~struck~~",
	"| [x] | - [ ] |\n|---|---|\n| ~~s~~ | <b>h</b> |",
	"| a | b |\r\n|---|---|\r\n| 1 | 2 |\r\n",
	"| é | 😀 |\n|---|---|\n| \x00 | \xff |",
}

// TestGFMParsesLikeGoldmark checks that switchboard's own table and task
// list parsing builds the tree goldmark's extensions build.
func TestGFMParsesLikeGoldmark(t *testing.T) {
	for _, md := range gfmCases {
		if got, want := ours(md), goldmarkGFM(md); got != want {
			t.Errorf("%q:\n got:\n%s\nwant:\n%s", md, got, want)
		}
	}
}

// FuzzGFMParsesLikeGoldmark is TestGFMParsesLikeGoldmark on any input.
func FuzzGFMParsesLikeGoldmark(f *testing.F) {
	for _, md := range gfmCases {
		f.Add(md)
	}
	f.Fuzz(func(t *testing.T, md string) {
		if got, want := ours(md), goldmarkGFM(md); got != want {
			t.Fatalf("%q:\n got:\n%s\nwant:\n%s", md, got, want)
		}
	})
}

// TestTableCellsAsText checks what a reader sees of a table's cells.
func TestTableCellsAsText(t *testing.T) {
	for _, c := range []struct{ md, want string }{
		{"| left | right |\n|:--|--:|\n| `x \\| y` | a \\| b |", "left | right\nx | y | a | b"},
		{"| a | b |\n|---|---|\n| 1 | 2 | 3 |\n| 4 |", "a | b\n1 | 2\n4 |"},
		{"- [x] done\n- [ ] open", "• ☑ done\n• ☐ open"},
	} {
		if got := PlainText(c.md); got != c.want {
			t.Errorf("PlainText(%q) = %q, want %q", c.md, got, c.want)
		}
	}
}
