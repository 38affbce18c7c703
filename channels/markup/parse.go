package markup

import (
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// sanitizer replaces NUL bytes and normalises line endings to "\n".
var sanitizer = strings.NewReplacer("\x00", "\uFFFD", "\r\n", "\n", "\r", "\n")

// parse parses md as CommonMark plus GFM tables, task lists and
// ~~strikethrough~~. Invalid UTF-8 and NUL bytes are replaced first (chat
// platforms reject them) and line endings become "\n". It returns the
// document and the source its segments point into.
func parse(md string) (ast.Node, []byte) {
	src := []byte(sanitizer.Replace(strings.ToValidUTF8(md, "\uFFFD")))
	return markdown.Parse(text.NewReader(src)), src
}

// markdown is the one parser every send shares: a goldmark parser keeps no
// state between parses, so it is safe from many goroutines at once
// (TestParserIsSharedSafely). Tables and task lists are goldmark's GFM
// extensions. Strikethrough is strikeParser, not extension.Strikethrough,
// which also strikes text between single tildes; Linkify is left out so that
// a bare URL stays text on platforms whose clients link it themselves.
var markdown = goldmark.New(
	goldmark.WithExtensions(extension.Table, extension.TaskList),
	goldmark.WithParserOptions(
		parser.WithInlineParsers(util.Prioritized(strikeParser{}, 500)),
	),
).Parser()

// strikeParser parses ~~text~~ as strikethrough. Unlike goldmark's GFM
// extension it leaves a single tilde alone, because LLMs write "~5 min" to
// mean "about five minutes", not to strike text through.
type strikeParser struct{}

// Trigger implements parser.InlineParser.
func (strikeParser) Trigger() []byte { return []byte{'~'} }

// Parse implements parser.InlineParser.
func (strikeParser) Parse(_ ast.Node, block text.Reader, pc parser.Context) ast.Node {
	before := block.PrecendingCharacter()
	line, segment := block.PeekLine()
	d := parser.ScanDelimiter(line, before, 2, strikeDelimiter{})
	if d == nil || d.OriginalLength != 2 || before == '~' {
		return nil
	}
	d.Segment = segment.WithStop(segment.Start + d.OriginalLength)
	block.Advance(d.OriginalLength)
	pc.PushDelimiter(d)
	return d
}

// strikeDelimiter pairs ~~ delimiters into strikethrough nodes.
type strikeDelimiter struct{}

// IsDelimiter implements parser.DelimiterProcessor.
func (strikeDelimiter) IsDelimiter(b byte) bool { return b == '~' }

// CanOpenCloser implements parser.DelimiterProcessor.
func (strikeDelimiter) CanOpenCloser(opener, closer *parser.Delimiter) bool {
	return opener.Char == closer.Char
}

// OnMatch implements parser.DelimiterProcessor.
func (strikeDelimiter) OnMatch(int) ast.Node { return extast.NewStrikethrough() }
