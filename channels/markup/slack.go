package markup

import (
	"net/url"
	"regexp"
	"strings"
)

// SlackMrkdwn renders Markdown as Slack mrkdwn, split into parts of at most
// limit UTF-16 code units (keep it at or under 3000, the limit of a section
// block's text). Each part is well-formed on its own: *bold*, _italic_,
// ~strike~, `code`, ```code blocks```, <url|label> links and "> " quoted
// lines. Headings become bold lines, lists "• item" and "1. item" lines,
// tables "a | b" lines; bare http(s) URLs become links. Everything else is
// literal text with &, < and > escaped, so Markdown can never produce a
// mention, a channel link or a broadcast (<!channel>, <@U123>); the words
// @channel, @here and @everyone get a zero-width space after the "@" as
// well. Links keep their href only for http, https and mailto URLs. Parts
// are cut between blocks first, then between lines, then between words; a
// long code block becomes one code block per part. Markdown with no visible
// text gives no parts. Limits below MinLimit are raised to it.
//
// Send the parts as section blocks with verbatim text, so that Slack does
// no parsing of its own beyond the markup written here.
func SlackMrkdwn(md string, limit int) []string {
	doc, src := parse(md)
	blocks := layoutDoc(doc, src, rules{linkOK: slackLinkOK})
	for i := range blocks {
		blocks[i].pieces = slackPieces(blocks[i].pieces)
	}
	return split(spell(blocks, slackDialect{}), limit)
}

// slackDialect spells pieces in Slack mrkdwn.
type slackDialect struct{}

// slackEscaper escapes the three characters mrkdwn gives a meaning to.
var slackEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// slackHrefEscaper keeps an href inside <href|label>: & as an entity, the
// delimiters percent-encoded.
var slackHrefEscaper = strings.NewReplacer("&", "&amp;", "<", "%3C", ">", "%3E", "|", "%7C")

// escape implements dialect.
func (slackDialect) escape(s string) string { return slackEscaper.Replace(s) }

// tags implements dialect.
func (slackDialect) tags(p piece) (open, close string) {
	switch p.style {
	case styleBold:
		return "*", "*"
	case styleItalic:
		return "_", "_"
	case styleStrike:
		return "~", "~"
	case styleCode:
		return "`", "`"
	case stylePre:
		return "```\n", "\n```"
	case styleLink:
		return "<" + slackHrefEscaper.Replace(p.attr) + "|", ">"
	case styleQuote:
		return "> ", ""
	}
	return "", ""
}

// slackLinkOK accepts the hrefs Slack opens: http(s) URLs with a host and
// mailto: addresses.
func slackLinkOK(href string) bool {
	if !linkOK(href) {
		return false
	}
	u, err := url.Parse(href)
	return err == nil && !strings.EqualFold(u.Scheme, "tg")
}

// slackPieces adapts one laid-out block to the rules of mrkdwn, which are
// line-based and looser than HTML:
//   - styles do not span lines, so every span but a code block is closed
//     before each newline and reopened after it (which also starts every
//     line of a quotation with "> ");
//   - a code block cannot contain ``` and inline code cannot contain `:
//     backtick runs (in code blocks and in text, where they could open
//     one) are broken with zero-width spaces, and inline code holding a
//     backtick becomes plain text;
//   - link labels cannot be styled, so styles inside a link are dropped;
//   - bare URLs in text become links, and broadcast words are defused;
//   - a style must hug its text, so spaces at its edges move outside it.
func slackPieces(ps []piece) []piece {
	out := make([]piece, 0, len(ps))
	var stack []slackOpenSpan
	inside := func(st style) bool {
		for _, sp := range stack {
			if sp.style == st && !sp.dropped {
				return true
			}
		}
		return false
	}
	for i := 0; i < len(ps); i++ {
		p := ps[i]
		switch p.kind {
		case pieceOpen:
			if p.style == styleCode && i+2 < len(ps) && ps[i+1].kind == pieceText &&
				ps[i+2].kind == pieceClose && ps[i+2].style == styleCode && strings.Contains(ps[i+1].text, "`") {
				out = append(out, piece{kind: pieceText, text: slackDefuse(ps[i+1].text)})
				i += 2 // the text and the closing piece
				continue
			}
			drop := inside(styleLink) && (p.style == styleBold || p.style == styleItalic || p.style == styleStrike)
			stack = append(stack, slackOpenSpan{piece: p, dropped: drop})
			if !drop {
				out = append(out, p)
			}
		case pieceClose:
			if len(stack) == 0 {
				continue
			}
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if !top.dropped {
				out = append(out, p)
			}
		case pieceText:
			switch {
			case inside(stylePre):
				out = append(out, piece{kind: pieceText, text: slackBreakTicks(p.text)})
			case inside(styleCode):
				out = append(out, p)
			default:
				out = slackText(out, p.text, stack, inside(styleLink))
			}
		}
	}
	return tidy(slackHugStyles(tidy(out)))
}

// slackOpenSpan is a span open at some point of a block; dropped spans are
// left out of the output.
type slackOpenSpan struct {
	piece
	dropped bool
}

// slackText appends literal text outside code: bare URLs become links
// (unless inLink), the text is defused, and the open spans in stack
// are closed before each newline and reopened after it.
func slackText(out []piece, s string, stack []slackOpenSpan, inLink bool) []piece {
	for line := range strings.SplitAfterSeq(s, "\n") {
		body, nl := strings.CutSuffix(line, "\n")
		if inLink {
			out = append(out, piece{kind: pieceText, text: slackDefuse(body)})
		} else {
			out = slackLinkify(out, body)
		}
		if !nl {
			continue
		}
		for i := len(stack) - 1; i >= 0; i-- {
			if !stack[i].dropped {
				c := stack[i].piece
				c.kind = pieceClose
				out = append(out, c)
			}
		}
		out = append(out, piece{kind: pieceText, text: "\n"})
		for _, o := range stack {
			if !o.dropped {
				out = append(out, o.piece)
			}
		}
	}
	return out
}

var (
	// slackBareURL matches a URL written bare in text, for slackLinkify.
	slackBareURL = regexp.MustCompile(`https?://[^\s<>"]+`)
	// slackBroadcast matches the mentions that notify a whole channel.
	slackBroadcast = regexp.MustCompile(`(?i)@(channel|here|everyone)\b`)
)

// slackDefuse puts a zero-width space after the "@" of @channel, @here and
// @everyone, so that no client or API setting can turn them into
// notifications for everyone, and between adjacent backticks, so that text
// cannot open or close a code block.
func slackDefuse(s string) string {
	if strings.Contains(s, "@") {
		s = slackBroadcast.ReplaceAllString(s, "@\u200b$1")
	}
	return slackBreakTicks(s)
}

// slackLinkify appends s with its bare URLs as link spans.
func slackLinkify(out []piece, s string) []piece {
	for s != "" {
		loc := slackBareURL.FindStringIndex(s)
		if loc == nil {
			break
		}
		href := slackTrimURL(s[loc[0]:loc[1]])
		if !slackLinkOK(href) {
			out = append(out, piece{kind: pieceText, text: slackDefuse(s[:loc[0]+len(href)])})
			s = s[loc[0]+len(href):]
			continue
		}
		link := piece{style: styleLink, attr: href, bare: true}
		open, shut := link, link
		open.kind, shut.kind = pieceOpen, pieceClose
		out = append(out, piece{kind: pieceText, text: slackDefuse(s[:loc[0]])}, open,
			piece{kind: pieceText, text: slackDefuse(href)}, shut)
		s = s[loc[0]+len(href):]
	}
	return append(out, piece{kind: pieceText, text: slackDefuse(s)})
}

// slackTrimURL drops the punctuation that ends a sentence rather than a URL,
// and a closing parenthesis the URL did not open.
func slackTrimURL(u string) string {
	for len(u) > 0 {
		last := u[len(u)-1]
		switch {
		case strings.IndexByte(".,:;!?'*_~", last) >= 0:
		case last == ')' && strings.Count(u, "(") < strings.Count(u, ")"):
		default:
			return u
		}
		u = u[:len(u)-1]
	}
	return u
}

// slackBreakTicks puts a zero-width space between adjacent backticks.
func slackBreakTicks(s string) string {
	if !strings.Contains(s, "``") {
		return s
	}
	var b strings.Builder
	prev := rune(0)
	for _, r := range s {
		if r == '`' && prev == '`' {
			b.WriteRune('\u200b')
		}
		b.WriteRune(r)
		prev = r
	}
	return b.String()
}

// slackHugStyles moves spaces at the inner edges of bold, italic and strike
// spans outside them: mrkdwn reads "* a *" as literal asterisks.
func slackHugStyles(ps []piece) []piece {
	hugging := func(p piece) bool {
		return p.style == styleBold || p.style == styleItalic || p.style == styleStrike
	}
	out := make([]piece, 0, len(ps)+4)
	for i := 0; i < len(ps); i++ {
		p := ps[i]
		switch {
		case p.kind == pieceOpen && hugging(p) && i+1 < len(ps) && ps[i+1].kind == pieceText:
			text := ps[i+1].text
			trimmed := strings.TrimLeft(text, " \t")
			out = append(out, piece{kind: pieceText, text: text[:len(text)-len(trimmed)]}, p,
				piece{kind: pieceText, text: trimmed})
			i++
		case p.kind == pieceClose && hugging(p) && len(out) > 0 && out[len(out)-1].kind == pieceText:
			last := &out[len(out)-1]
			trimmed := strings.TrimRight(last.text, " \t")
			space := last.text[len(trimmed):]
			last.text = trimmed
			out = append(out, p, piece{kind: pieceText, text: space})
		default:
			out = append(out, p)
		}
	}
	return out
}
