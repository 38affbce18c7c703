package markup

import (
	"html"
	"net/url"
	"strings"
	"unicode"
)

// TelegramHTML renders Markdown as Telegram's HTML parse mode, split into
// parts of at most limit UTF-16 code units (Telegram's message limit is
// 4096). Each part is well-formed on its own, using only <b>, <i>, <s>,
// <code>, <pre>, <pre><code class="language-x">, <a href> and <blockquote>;
// all other text, raw HTML included, is escaped. Headings become bold lines,
// lists "• item" and "1. item" lines, tables "a | b" lines. Links keep their
// href only for http, https, tg and mailto URLs. Parts are cut between
// blocks first, then between lines, then between words; a long code block
// becomes one code block per part. Markdown with no visible text gives no
// parts. Limits below MinLimit are raised to it.
func TelegramHTML(md string, limit int) []string {
	doc, src := parse(md)
	blocks := layoutDoc(doc, src, rules{linkOK: linkOK})
	return split(spell(blocks, telegramDialect{}), limit)
}

// TelegramText returns the text a reader sees in a part made by
// TelegramHTML: tags dropped, entities decoded. Send it without a parse mode
// when Telegram refuses the HTML.
func TelegramText(part string) string {
	var b strings.Builder
	for part != "" {
		if part[0] == '<' {
			end := strings.IndexByte(part, '>')
			if end < 0 {
				b.WriteString(part)
				break
			}
			part = part[end+1:]
			continue
		}
		end := strings.IndexByte(part, '<')
		if end < 0 {
			end = len(part)
		}
		b.WriteString(html.UnescapeString(part[:end]))
		part = part[end:]
	}
	return b.String()
}

// telegramDialect spells pieces in Telegram's HTML subset.
type telegramDialect struct{}

var (
	textEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	attrEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")
)

// escape implements dialect.
func (telegramDialect) escape(s string) string { return textEscaper.Replace(s) }

// tags implements dialect.
func (telegramDialect) tags(p piece) (open, close string) {
	switch p.style {
	case styleBold:
		return "<b>", "</b>"
	case styleItalic:
		return "<i>", "</i>"
	case styleStrike:
		return "<s>", "</s>"
	case styleCode:
		return "<code>", "</code>"
	case stylePre:
		if p.attr == "" {
			return "<pre>", "</pre>"
		}
		return `<pre><code class="language-` + attrEscaper.Replace(p.attr) + `">`, "</code></pre>"
	case styleLink:
		return `<a href="` + attrEscaper.Replace(p.attr) + `">`, "</a>"
	case styleQuote:
		return "<blockquote>", "</blockquote>"
	}
	return "", ""
}

// maxHref bounds link targets, so a link's markup always leaves room for
// text in a 4096-unit message.
const maxHref = 2048

// linkOK accepts the hrefs chat platforms open: http(s) URLs with a host,
// tg: links and mailto: addresses, without spaces or control characters.
func linkOK(href string) bool {
	if href == "" || len(href) > maxHref || strings.IndexFunc(href, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || r == unicode.ReplacementChar
	}) >= 0 {
		return false
	}
	u, err := url.Parse(href)
	if err != nil {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		return u.Host != ""
	case "tg", "mailto":
		return u.Opaque != "" || u.Host != "" || u.Path != ""
	}
	return false
}
