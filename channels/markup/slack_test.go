package markup

import (
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestSlackMrkdwnFormatting(t *testing.T) {
	tests := []struct {
		name, md, want string
	}{
		{"bold italic strike", "**b** *i* _i_ __b__ ~~s~~", "*b* _i_ _i_ *b* ~s~"},
		{"single tilde is text", "takes ~5 min", "takes ~5 min"},
		{"nested styles", "***both*** **bold *and it***", "_*both*_ *bold _and it_*"},
		{"inline code", "run `go test ./...` now", "run `go test ./...` now"},
		{"code moves out of bold, spaces hug", "**use `x` now**", "*use* `x` *now*"},
		{"code escapes", "`a < b && c > d`", "`a &lt; b &amp;&amp; c &gt; d`"},
		{"code with backtick is text", "``a`b``", "a`b"},
		{"fence in text broken", "say \\```", "say `\u200b`\u200b`"},
		{"heading", "## Status\nall good", "*Status*\n\nall good"},
		{"bullets", "- a\n- b", "• a\n• b"},
		{"numbered", "3. c\n4. d", "3. c\n4. d"},
		{"nested list", "- a\n  - b", "• a\n  • b"},
		{"task list", "- [x] done\n- [ ] todo", "• ☑ done\n• ☐ todo"},
		{"fenced code", "```go\nfunc f() {}\n```", "```\nfunc f() {}\n```"},
		{"fence inside code broken", "````\nx ``` y\n````", "```\nx `\u200b`\u200b` y\n```"},
		{"quote", "> wise words", "> wise words"},
		{"quote every line", "> one\n> **two\n> three**", "> one\n> *two*\n> *three*"},
		{"style per line", "**a\nb**", "*a*\n*b*"},
		{"link", "[docs](https://example.com/a?b=1&c=2)", "<https://example.com/a?b=1&amp;c=2|docs>"},
		{"link label unstyled", "[**go** here](https://x.io)", "<https://x.io|go here>"},
		{"styled link", "**[go](https://x.io)**", "*<https://x.io|go>*"},
		{"link delimiters in href", `[x](<https://x.io/a|b\>c>)`, "<https://x.io/a%7Cb%3Ec|x>"},
		{"mailto link", "[mail](mailto:a@b.c)", "<mailto:a@b.c|mail>"},
		{"tg link is text", "[me](tg://user?id=42)", "me"},
		{"javascript link is text", "[click](javascript:alert(1))", "click"},
		{"autolink", "<https://x.io/p>", "<https://x.io/p|https://x.io/p>"},
		{"bare url linked", "see https://x.io/a.", "see <https://x.io/a|https://x.io/a>."},
		{"bare url in parens", "(https://x.io/a_(b)) and (https://y.io)", "(<https://x.io/a_(b)|https://x.io/a_(b)>) and (<https://y.io|https://y.io>)"},
		{"bare url in code stays code", "`https://x.io`", "`https://x.io`"},
		{"table as text", "| a | b |\n|---|---|\n| 1 | **2** |", "a | b\n1 | 2"},
		{"thematic break", "a\n\n---\n\nb", "a\n\n———\n\nb"},
		{"empty input", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parts := SlackMrkdwn(tt.md, 3000)
			got := strings.Join(parts, "\n---part---\n")
			if got != tt.want {
				t.Errorf("SlackMrkdwn(%q)\n got %q\nwant %q", tt.md, got, tt.want)
			}
			for _, p := range parts {
				if err := checkSlackPart(p, 3000); err != nil {
					t.Errorf("part %q: %v", p, err)
				}
			}
		})
	}
}

func TestSlackMrkdwnHostileText(t *testing.T) {
	tests := []struct {
		name, md, want string
	}{
		{"slackBroadcast syntax", "<!channel> <!here> <!everyone>", "&lt;!channel&gt; &lt;!here&gt; &lt;!everyone&gt;"},
		{"user and channel mentions", "<@U123> <#C123|general> <!subteam^S1>", "&lt;@U123&gt; &lt;#C123|general&gt; &lt;!subteam^S1&gt;"},
		{"slackBroadcast words", "@here @Channel @everyone, @heresy", "@\u200bhere @\u200bChannel @\u200beveryone, @heresy"},
		{"slackBroadcast in bare url", "https://x.io/@here", "<https://x.io/@here|https://x.io/@\u200bhere>"},
		{"script", "<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"},
		{"ampersand", "a & b &amp; c", "a &amp; b &amp; c"},
		{"fake link", "<https://evil.io|https://bank.com>", "https://evil.io|https://bank.com"},
		{"fake link in text", "x <https://evil.io|bank.com>", "x https://evil.io|bank.com"},
		{"mention in code", "`<@U1>` and\n```\n<!channel>\n```", "`&lt;@U1&gt;` and\n\n```\n&lt;!channel&gt;\n```"},
		{"mention in link label", "[<!here>](https://x.io)", "<https://x.io|&lt;!here&gt;>"},
		{"mention in href", "[x](https://x.io/<!here>)", "<https://x.io/%3C!here%3E|x>"},
		{"quote marker in text", "a\n\\> not a quote", "a\n&gt; not a quote"},
		{"html block", "<div>\n<@U1>\n</div>", "&lt;div&gt;\n&lt;@U1&gt;\n&lt;/div&gt;"},
		{"nul and bad utf-8", "a\x00b\xff", "a\uFFFDb\uFFFD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parts := SlackMrkdwn(tt.md, 3000)
			got := strings.Join(parts, "\n---part---\n")
			if got != tt.want {
				t.Errorf("SlackMrkdwn(%q)\n got %q\nwant %q", tt.md, got, tt.want)
			}
			for _, p := range parts {
				if err := checkSlackPart(p, 3000); err != nil {
					t.Errorf("part %q: %v", p, err)
				}
			}
		})
	}
}

func TestSlackMrkdwnSplitsCodeBlockIntoCodeBlocks(t *testing.T) {
	var lines []string
	for i := range 300 {
		lines = append(lines, fmt.Sprintf("fmt.Println(%d, \"a < b && c\")", i))
	}
	md := "Intro **text**.\n\n```go\n" + strings.Join(lines, "\n") + "\n```\n\nOutro."
	const limit = 3000
	parts := SlackMrkdwn(md, limit)
	checkSlackParts(t, md, parts, limit)
	var code []string
	for _, p := range parts {
		if _, body, ok := strings.Cut(p, "```\n"); ok {
			body, _, _ = strings.Cut(body, "\n```")
			code = append(code, html.UnescapeString(body))
		}
	}
	if len(code) < 2 {
		t.Fatalf("code block not split: %d parts", len(parts))
	}
	if strings.Join(code, "\n") != strings.Join(lines, "\n") {
		t.Errorf("code parts do not hold whole lines in order")
	}
}

func TestSlackMrkdwnSplitsQuotesAndStyles(t *testing.T) {
	md := "> " + strings.Repeat("quoted words ", 40) + "\n>\n> **" + strings.TrimSpace(strings.Repeat("bold words ", 30)) + "**"
	const limit = 120
	parts := SlackMrkdwn(md, limit)
	if len(parts) < 4 {
		t.Fatalf("want several parts, got %q", parts)
	}
	checkSlackParts(t, md, parts, limit)
	for _, p := range parts {
		for line := range strings.Lines(p) {
			if !strings.HasPrefix(line, "> ") {
				t.Errorf("quoted line %q lost its marker", line)
			}
			if strings.Count(line, "*")%2 != 0 {
				t.Errorf("line %q has an unbalanced bold", line)
			}
		}
	}
}

func TestSlackMrkdwnLongMixedDocument(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Report\n\n")
	for i := range 60 {
		fmt.Fprintf(&b, "Paragraph %d has **bold**, *italic*, `code`, <@U%d> and a [link](https://example.com/%d).\n\n", i, i, i)
	}
	b.WriteString("> " + strings.Repeat("quoted text ", 100) + "\n\n")
	b.WriteString("```\n" + strings.Repeat("0123456789 ", 500) + "\n```\n")
	md := b.String()
	parts := SlackMrkdwn(md, 3000)
	if len(parts) < 4 {
		t.Fatalf("want several parts, got %d", len(parts))
	}
	checkSlackParts(t, md, parts, 3000)
}

func FuzzSlackMrkdwn(f *testing.F) {
	f.Add("**bold** *it* `code` [l](https://x.io) <!here> @channel a & b", uint16(20))
	f.Add("```go\nfunc main() {\n\tprintln(\"```<&>\")\n}\n```", uint16(40))
	f.Add("> quote **b\nc** [l](https://x.io)\n> > nested https://y.io/a", uint16(30))
	f.Add("- a\n  - b\n- [x] c\n\n| t | u |\n|---|---|\n| 1 | 2 |", uint16(16))
	f.Add(strings.Repeat("😀&<", 30), uint16(17))
	f.Add("0```0", uint16(13))
	f.Add("https://00@ChAnnel https://x.io/``a``", uint16(7))
	f.Fuzz(func(t *testing.T, md string, l uint16) {
		limit := MinLimit + int(l)%5000
		parts := SlackMrkdwn(md, limit)
		for i, p := range parts {
			if err := checkSlackPart(p, limit); err != nil {
				t.Fatalf("limit %d, part %d %q: %v", limit, i, p, err)
			}
		}
		whole := SlackMrkdwn(md, 1<<30)
		if len(whole) > 1 {
			t.Fatalf("unlimited render split into %d parts", len(whole))
		}
		if got, want := slackVisible(parts), slackVisible(whole); got != want {
			t.Fatalf("limit %d lost text:\n got %q\nwant %q", limit, got, want)
		}
	})
}

func BenchmarkSlackMrkdwn(b *testing.B) {
	var sb strings.Builder
	for i := range 60 {
		fmt.Fprintf(&sb, "## Step %d\n\nSome **bold**, *italic*, `code` and a [link](https://example.com/%d) & more.\n\n- item a\n- item b\n\n", i, i)
	}
	sb.WriteString("```go\n" + strings.Repeat("fmt.Println(\"hello, world\")\n", 100) + "```\n")
	md := sb.String()
	b.SetBytes(int64(len(md)))
	for b.Loop() {
		SlackMrkdwn(md, 3000)
	}
}

// checkSlackParts checks every part and that the parts together show all
// the text of the unsplit rendering.
func checkSlackParts(t *testing.T, md string, parts []string, limit int) {
	t.Helper()
	for i, p := range parts {
		if err := checkSlackPart(p, limit); err != nil {
			t.Errorf("part %d/%d %q: %v", i+1, len(parts), p, err)
		}
	}
	whole := SlackMrkdwn(md, 1<<30)
	if got, want := slackVisible(parts), slackVisible(whole); got != want {
		t.Errorf("split lost text:\n got %q\nwant %q", got, want)
	}
}

var (
	slackLinkOpen   = regexp.MustCompile(`^<(?:https?://|mailto:)[^\s|<>]+\|`)
	slackEntity     = regexp.MustCompile(`^&(?:amp|lt|gt);`)
	slackBroadcasts = regexp.MustCompile(`(?i)@(?:channel|here|everyone)\b`)
)

// checkSlackPart reports how part breaks SlackMrkdwn's promises: longer
// than limit UTF-16 units, invalid UTF-8, a '<' that does not open an
// http(s) or mailto link (so no mention, channel link or slackBroadcast), a raw
// '>' that neither closes a link nor marks a quoted line, a raw '&', an
// unclosed link or code block, a live slackBroadcast word outside an href, or
// no visible text.
func checkSlackPart(part string, limit int) error {
	if !utf8.ValidString(part) {
		return fmt.Errorf("invalid UTF-8")
	}
	if n := utf16Len(part); n > limit {
		return fmt.Errorf("%d UTF-16 units, limit %d", n, limit)
	}
	if m := slackBroadcasts.FindString(slackHref.ReplaceAllString(part, "<|")); m != "" {
		return fmt.Errorf("live slackBroadcast %q", m)
	}
	inLink, inPre, visible := false, false, false
	lineStart := true
	for i := 0; i < len(part); {
		if strings.HasPrefix(part[i:], "```") {
			if inLink {
				return fmt.Errorf("code block inside a link at byte %d", i)
			}
			inPre = !inPre
			i += 3
			lineStart = false
			continue
		}
		c := part[i]
		switch {
		case c == '<':
			m := slackLinkOpen.FindString(part[i:])
			if m == "" || inLink || inPre {
				return fmt.Errorf("raw '<' at byte %d: %q", i, part[i:min(len(part), i+30)])
			}
			inLink = true
			i += len(m)
		case c == '>' && inLink:
			inLink = false
			i++
		case c == '>' && lineStart && !inPre && strings.HasPrefix(part[i:], "> "):
			i += 2
		case c == '>':
			return fmt.Errorf("raw '>' at byte %d", i)
		case c == '&':
			m := slackEntity.FindString(part[i:])
			if m == "" {
				return fmt.Errorf("raw '&' at byte %d", i)
			}
			i += len(m)
			visible = true
		case c == '\n' && inLink:
			return fmt.Errorf("newline inside a link at byte %d", i)
		default:
			r, size := utf8.DecodeRuneInString(part[i:])
			if !unicode.IsSpace(r) {
				visible = true
			}
			i += size
		}
		lineStart = c == '\n'
	}
	if inLink {
		return fmt.Errorf("unclosed link")
	}
	if inPre {
		return fmt.Errorf("unclosed code block")
	}
	if !visible {
		return fmt.Errorf("no visible text")
	}
	return nil
}

var slackHref = regexp.MustCompile(`<[^|<>\s]*\|`)

// slackVisible is what a reader sees across parts, markup and whitespace
// dropped (literal *, _, ~ and ` go too, the same on both sides of a
// comparison).
func slackVisible(parts []string) string {
	var b strings.Builder
	for _, p := range parts {
		p = slackHref.ReplaceAllString(p, "")
		p = strings.NewReplacer(">", "", "*", "", "_", "", "~", "", "`", "", "\u200b", "").Replace(p)
		b.WriteString(html.UnescapeString(p))
	}
	return squash(b.String())
}
