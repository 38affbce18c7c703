package markup

import (
	"strings"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
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
	return markdown().Parse(text.NewReader(src)), src
}

// markdown is the parser, built once on first use (building one costs
// ~13 KB of allocations; parsing with it keeps no state, so every send
// shares it).
var markdown = sync.OnceValue(func() parser.Parser {
	return goldmark.New(
		goldmark.WithParserOptions(
			parser.WithInlineParsers(util.Prioritized(strikeParser{}, 500), util.Prioritized(taskBoxes{}, 0)),
			parser.WithParagraphTransformers(util.Prioritized(tableParagraphs{}, 200)),
			parser.WithASTTransformers(util.Prioritized(tableCodePipes{}, 0)),
		),
	).Parser()
})

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
