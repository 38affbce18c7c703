package markup

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DiscordMarkdown renders Markdown as the Markdown Discord displays, split
// into parts of at most limit UTF-16 code units (Discord's message limit is
// 2000 characters; UTF-16 units never undercount them).
//
// Formatting keeps Discord's syntax: **bold**, *italic*, ~~strike~~, `code`,
// fenced code blocks with their language, [label](https://…) links and "> "
// quotations (one marker per line). Headings become bold lines, lists
// "• item" and "1. item" lines, tables "a | b" lines, as on every platform.
// Everything else is literal: characters that would start Discord
// formatting (* _ ` \ [ ] ~~ || and, at the start of a line, # - + > "1.")
// are backslash-escaped, bare URLs are left alone so Discord still links
// them, and a code block cannot be closed early by backticks inside it.
//
// The output is safe against mention injection: "<" that could open a user,
// role or channel mention is escaped and "<@" is broken with a zero-width
// joiner, and every "@everyone" and "@here" (also inside code) gets a
// zero-width joiner after the "@". This is defence in depth: senders must
// still set allowed_mentions to parse nothing.
//
// Parts are cut between blocks first, then between lines, then between
// words; a long code block becomes one fenced block per part, reopened with
// its language. Markdown with no visible text gives no parts. Limits below
// MinLimit are raised to it.
func DiscordMarkdown(md string, limit int) []string {
	doc, src := parse(md)
	blocks := layoutDoc(doc, src, rules{linkOK: discordLinkOK})
	for i := range blocks {
		blocks[i].pieces = tidy(discordHoistSpaces(blocks[i].pieces))
	}
	return split(spellDiscord(blocks), limit)
}

// discordLinkOK accepts the hrefs Discord shows as masked links: http and
// https URLs with a host.
func discordLinkOK(href string) bool {
	if !linkOK(href) {
		return false
	}
	u, err := url.Parse(href)
	if err != nil {
		return false
	}
	s := strings.ToLower(u.Scheme)
	return (s == "http" || s == "https") && u.Host != ""
}

// discordHoistSpaces moves whitespace at the inner edges of bold, italic and
// strikethrough spans outside them: Discord, like CommonMark, does not
// render "* it *" as italic. It repeats until nothing moves, since moving
// out of an inner span can put whitespace at the edge of an outer one.
func discordHoistSpaces(ps []piece) []piece {
	inline := func(p piece) bool {
		return p.style == styleBold || p.style == styleItalic || p.style == styleStrike
	}
	for range 8 {
		moved := false
		out := make([]piece, 0, len(ps)+4)
		for i := 0; i < len(ps); i++ {
			p := ps[i]
			switch {
			case p.kind == pieceOpen && inline(p) && i+1 < len(ps) && ps[i+1].kind == pieceText:
				text := ps[i+1].text
				body := strings.TrimLeftFunc(text, unicode.IsSpace)
				if body != text {
					out = append(out, piece{kind: pieceText, text: text[:len(text)-len(body)]}, p,
						piece{kind: pieceText, text: body})
					i++
					moved = true
					continue
				}
			case p.kind == pieceClose && inline(p) && len(out) > 0 && out[len(out)-1].kind == pieceText:
				text := out[len(out)-1].text
				body := strings.TrimRightFunc(text, unicode.IsSpace)
				if body != text {
					out[len(out)-1].text = body
					out = append(out, p, piece{kind: pieceText, text: text[len(body):]})
					moved = true
					continue
				}
			}
			out = append(out, p)
		}
		ps = joinText(out)
		if !moved {
			break
		}
	}
	return ps
}

// discordSpeller spells one block's pieces in Discord Markdown. It keeps
// the context a per-piece dialect cannot: whether text starts a line, is
// inside code or a bare link, and which spans are open, so a quotation can
// be closed and reopened ("> ") around every newline inside it.
type discordSpeller struct {
	toks      []token
	open      []discordSpan // open spans, outermost first
	lineStart bool
	quote     int  // index in open of the quotation, -1 if none
	more      bool // markup may follow the text being spelled
}

// discordSpan is a span the speller has opened.
type discordSpan struct {
	tok   token
	style style
	bare  bool // a link whose label is its URL
}

// inside reports whether a span of style st is open; for links, only bare
// ones count when bare is set.
func (s *discordSpeller) inside(st style, bare bool) bool {
	for _, o := range s.open {
		if o.style == st && (!bare || o.bare) {
			return true
		}
	}
	return false
}

// styled reports whether a span with closing markup is open, so text
// ending there is followed by markup.
func (s *discordSpeller) styled() bool {
	for _, o := range s.open {
		if o.tok.close != "" && o.style != styleQuote {
			return true
		}
	}
	return false
}

// spellDiscord spells blocks in Discord Markdown.
func spellDiscord(bs []block) []spelled {
	out := make([]spelled, 0, len(bs))
	for _, b := range bs {
		s := &discordSpeller{lineStart: true, quote: -1}
		for i, p := range b.pieces {
			switch p.kind {
			case pieceText:
				s.more = s.styled() || slices.ContainsFunc(b.pieces[i+1:], func(q piece) bool { return q.kind == pieceOpen })
				s.text(p.text)
			case pieceOpen:
				var inner string
				if i+1 < len(b.pieces) && b.pieces[i+1].kind == pieceText {
					inner = b.pieces[i+1].text
				}
				s.startSpan(p, inner)
			case pieceClose:
				s.closeSpan()
			}
		}
		out = append(out, spelled{toks: s.toks, tight: b.tight})
	}
	return out
}

// startSpan opens a span; inner is the text right after it, which decides
// the fence of inline code.
func (s *discordSpeller) startSpan(p piece, inner string) {
	var open, shut string
	switch p.style {
	case styleBold:
		open, shut = "**", "**"
	case styleItalic:
		open, shut = "*", "*"
	case styleStrike:
		open, shut = "~~", "~~"
	case styleCode:
		open, shut = discordCodeFence(inner)
	case stylePre:
		open, shut = "```"+strings.ToLower(p.attr)+"\n", "\n```"
	case styleLink:
		if !p.bare {
			open, shut = "[", "]("+discordHrefEscaper.Replace(p.attr)+")"
		}
	case styleQuote:
		if s.lineStart && s.quote < 0 {
			open = "> "
			s.quote = len(s.open)
		}
	}
	t := token{kind: tokOpen, s: open, close: shut}
	s.toks = append(s.toks, t)
	s.open = append(s.open, discordSpan{tok: t, style: p.style, bare: p.style == styleLink && p.bare})
	if open != "" {
		s.lineStart = p.style == styleQuote
	}
}

// closeSpan closes the innermost open span.
func (s *discordSpeller) closeSpan() {
	if len(s.open) == 0 {
		return
	}
	t := s.open[len(s.open)-1].tok
	s.open = s.open[:len(s.open)-1]
	s.toks = append(s.toks, token{kind: tokClose, s: t.close})
	if s.quote == len(s.open) {
		s.quote = -1
	}
	if t.close != "" {
		s.lineStart = false
	}
}

// text spells literal text. Inside a quotation every newline closes the
// spans open in the line and the quotation, and reopens them on the next.
func (s *discordSpeller) text(t string) {
	if s.quote < 0 {
		s.literal(t)
		return
	}
	for {
		line, rest, more := strings.Cut(t, "\n")
		s.literal(line)
		if !more {
			return
		}
		reopen := s.open[s.quote:]
		for k := len(reopen) - 1; k >= 0; k-- {
			s.toks = append(s.toks, token{kind: tokClose, s: reopen[k].tok.close})
		}
		s.toks = append(s.toks, token{kind: tokText, s: "\n"})
		for _, o := range reopen {
			s.toks = append(s.toks, o.tok)
		}
		s.lineStart = len(reopen) == 1 // only the quotation marker since the newline
		t = rest
	}
}

// literal appends one run of text without quotation newlines.
func (s *discordSpeller) literal(t string) {
	if t == "" {
		return
	}
	var out string
	switch {
	case s.inside(styleCode, false):
		out = discordBreakTicks(discordDefuseCode(t))
	case s.inside(stylePre, false):
		out = discordDefuseCode(t)
	case s.inside(styleLink, true):
		out = discordDefuse(t)
	default:
		out = s.escape(t)
	}
	s.toks = append(s.toks, token{kind: tokText, s: out})
	s.lineStart = strings.HasSuffix(t, "\n")
}

// discordURL matches what Discord turns into a link by itself; such URLs
// are copied unescaped so they keep working.
var discordURL = regexp.MustCompile(`https?://[^\s<]+[^<.,:;"')\]\s]`)

// escape backslash-escapes the Markdown in literal text, leaving bare URLs
// alone, and neutralises mentions.
func (s *discordSpeller) escape(t string) string {
	var b strings.Builder
	lineStart := s.lineStart
	last := 0
	for _, m := range discordURL.FindAllStringIndex(t, -1) {
		discordEscapeRun(&b, t[last:m[0]], lineStart)
		if discordURLEndsClean(t[m[1]:], s.more) {
			b.WriteString(t[m[0]:m[1]])
		} else {
			b.WriteString("<" + t[m[0]:m[1]] + ">")
		}
		lineStart = false
		last = m[1]
	}
	discordEscapeRun(&b, t[last:], lineStart)
	return discordDefuse(b.String())
}

// discordURLEndsClean reports whether Discord will end a bare URL where the
// text does, given the text after it and whether markup may follow that
// text: not when escapes or markup follow without a space, which Discord
// would read as part of the URL. Such a URL is written as <url> instead.
func discordURLEndsClean(after string, more bool) bool {
	end := strings.IndexFunc(after, func(r rune) bool { return unicode.IsSpace(r) || r == '<' })
	if end < 0 {
		if more {
			return false
		}
		end = len(after)
	}
	return !strings.ContainsAny(after[:end], "\\*_`[]~|")
}

// discordEscapeRun escapes one run of text without URLs; lineStart says whether
// it starts a line.
func discordEscapeRun(b *strings.Builder, t string, lineStart bool) {
	for i := 0; i < len(t); {
		r, size := utf8.DecodeRuneInString(t[i:])
		if lineStart {
			if n := discordLineMarker(t[i:]); n > 0 {
				b.WriteString(t[i : i+n-1])
				b.WriteByte('\\')
				b.WriteByte(t[i+n-1])
				i += n
				lineStart = false
				continue
			}
			lineStart = false
		}
		next, _ := utf8.DecodeRuneInString(t[i+size:])
		prev, _ := utf8.DecodeLastRuneInString(t[:i])
		switch {
		case r == '\\' || r == '*' || r == '_' || r == '`' || r == '[' || r == ']':
			b.WriteByte('\\')
		case (r == '~' || r == '|') && (next == r || prev == r || i == 0 || i+size == len(t)):
			b.WriteByte('\\')
		case r == '<' && i+size < len(t) && !unicode.IsSpace(next) && !unicode.IsDigit(next) && next != '=':
			b.WriteByte('\\')
			if next == '@' {
				b.WriteString("<" + discordZWJ)
				i += size
				continue
			}
		}
		b.WriteString(t[i : i+size])
		if r == '\n' {
			lineStart = true
		}
		i += size
	}
}

// discordLineMarker returns the length, up to and including the character to
// escape, of Markdown Discord reads at the start of a line ("# ", "- ",
// "+ ", ">", "1. ") after optional spaces, or 0.
func discordLineMarker(t string) int {
	i := 0
	for i < len(t) && t[i] == ' ' {
		i++
	}
	if i == len(t) {
		return 0
	}
	switch t[i] {
	case '#', '>':
		return i + 1
	case '-', '+':
		if i+1 < len(t) && (t[i+1] == ' ' || t[i+1] == '#') {
			return i + 1
		}
		return 0
	}
	j := i
	for j < len(t) && t[j] >= '0' && t[j] <= '9' {
		j++
	}
	if j > i && j < len(t) && t[j] == '.' && (j+1 == len(t) || t[j+1] == ' ') {
		return j + 1
	}
	return 0
}

// discordZWJ is the zero-width joiner that breaks mentions without changing how
// the text looks.
const discordZWJ = "\u200d"

// discordMassMention matches the mentions that notify a whole server or
// channel.
var discordMassMention = regexp.MustCompile(`(?i)@(everyone|here)`)

// discordDefuse puts a zero-width joiner after the "@" of
// @everyone and @here, and between "<" and "@" of user and role mentions.
func discordDefuse(s string) string {
	s = discordMassMention.ReplaceAllString(s, "@"+discordZWJ+"$1")
	return strings.ReplaceAll(s, "<@", "<"+discordZWJ+"@")
}

// discordDefuseCode prepares code text: mentions are broken as in other
// text, and no run of three backticks is left to close the fence early.
func discordDefuseCode(s string) string {
	s = discordDefuse(s)
	for strings.Contains(s, "```") {
		s = strings.ReplaceAll(s, "```", "``"+discordZWJ+"`")
	}
	return s
}

// discordCodeFence returns the backticks around inline code text: one,
// or two when the text has backticks (which discordBreakTicks leaves in
// runs of one), padded with a space when the text starts or ends with one.
func discordCodeFence(text string) (open, shut string) {
	switch {
	case !strings.Contains(text, "`"):
		return "`", "`"
	case strings.HasPrefix(text, "`") || strings.HasSuffix(text, "`"):
		return "`` ", " ``"
	}
	return "``", "``"
}

// discordBreakTicks puts a zero-width joiner between adjacent backticks, so
// inline code text cannot end its two-backtick fence early.
func discordBreakTicks(s string) string {
	for strings.Contains(s, "``") {
		s = strings.ReplaceAll(s, "``", "`"+discordZWJ+"`")
	}
	return s
}

// discordHrefEscaper keeps a link target inside its parentheses.
var discordHrefEscaper = strings.NewReplacer("(", "%28", ")", "%29", "<", "%3C", ">", "%3E", " ", "%20")
