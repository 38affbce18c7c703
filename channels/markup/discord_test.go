package markup

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

const zw = "\u200d"

func TestDiscordMarkdownFormatting(t *testing.T) {
	tests := []struct {
		name, md, want string
	}{
		{"bold italic strike", "**b** *i* _i_ __b__ ~~s~~", "**b** *i* *i* **b** ~~s~~"},
		{"nested styles", "***both*** **bold *and it***", "***both*** **bold *and it***"},
		{"spaces moved out of styles", "**use `x` now**", "**use** `x` **now**"},
		{"heading", "## Status\nall good", "**Status**\n\nall good"},
		{"bullets and numbers", "- a\n  - b\n\n3. c", "• a\n  • b\n\n3\\. c"},
		{"fenced code keeps language", "```Go\nfunc f() {}\n```", "```go\nfunc f() {}\n```"},
		{"code block without language", "```\nx := 1\n```", "```\nx := 1\n```"},
		{"code block text is literal", "```\na*b_c <d>\n```", "```\na*b_c <d>\n```"},
		{"fence inside code broken", "````\nx ``` y\n````", "```\nx ``" + zw + "` y\n```"},
		{"inline code", "run `go test ./...` now", "run `go test ./...` now"},
		{"inline code with backticks", "`` a`b `` and ` `` `", "``a`b`` and `` `" + zw + "` ``"},
		{"quote marks every line", "> **a\n> b** c", "> **a**\n> **b** c"},
		{"quote link and code as text", "> see [d](https://d.io) `x`", "> see d (https://d.io) x"},
		{"link", "[docs](https://example.com/a_(b)?c=1)", "[docs](https://example.com/a_%28b%29?c=1)"},
		{"link label escaped", "[a\\]b](https://x.io)", "[a\\]b](https://x.io)"},
		{"autolink is bare", "<https://x.io/a_b>", "https://x.io/a_b"},
		{"bare url unescaped", "see https://x.io/snake_case.", "see https://x.io/snake_case."},
		{"bare url before markup wrapped", "**docs: https://x.io/a_b**", "**docs: <https://x.io/a_b>**"},
		{"bare url before markup wrapped too", "https://x.io/a,_b_", "<https://x.io/a>,*b*"},
		{"bare url ending at escape", "see https://x.io/a.\\_b \\_", "see https://x.io/a._b \\_"},
		{"mailto link is its label", "[mail](mailto:a@b.c)", "mail"},
		{"javascript link is text", "[click](javascript:alert(1))", "click"},
		{"image becomes link", "![chart](https://i.io/c.png)", "[chart](https://i.io/c.png)"},
		{"table as text", "| a | b |\n|---|---|\n| 1 | **2** |", "a | b\n1 | 2"},
		{"thematic break", "a\n\n---\n\nb", "a\n\n———\n\nb"},
		{"empty input", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parts := DiscordMarkdown(tt.md, 2000)
			got := strings.Join(parts, "\n---part---\n")
			if got != tt.want {
				t.Errorf("DiscordMarkdown(%q)\n got %q\nwant %q", tt.md, got, tt.want)
			}
			for _, p := range parts {
				if err := checkDiscordPart(p, 2000); err != nil {
					t.Errorf("part %q: %v", p, err)
				}
			}
		})
	}
}

func TestDiscordMarkdownEscapesLiteralText(t *testing.T) {
	tests := []struct {
		name, md, want string
	}{
		{"emphasis characters", "3 \\* 4, snake\\_case, \\`tick\\`", "3 \\* 4, snake\\_case, \\`tick\\`"},
		{"backslash", `C:\\dir`, `C:\\dir`},
		{"single tilde and pipe stay", "takes ~5 min, a | b", "takes ~5 min, a | b"},
		{"double tilde and pipe escaped", `a \~\~b\~\~ c \|\|d\|\|`, `a \~\~b\~\~ c \|\|d\|\|`},
		{"brackets", `\[x\](https://y.io)`, `\[x\](https://y.io)`},
		{"comparisons stay", "a < b, a <= b, 1 <2", "a < b, a <= b, 1 <2"},
		{"tag-like text escaped", "x<y <t:123> <:e:1>", `x\<y \<t:123> \<:e:1>`},
		{"heading marker", `\# not a heading`, `\# not a heading`},
		{"list markers", "\\- a\n\\+ b\n1\\. c", "\\- a\n\\+ b\n1\\. c"},
		{"subtext marker", `\-# small`, `\-# small`},
		{"quote marker", `\> not quoted`, `\> not quoted`},
		{"markers mid-line stay", "a - b # c > d 1. e", "a - b # c > d 1. e"},
		{"raw html is text", "<b>hi</b>", `\<b>hi\</b>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(DiscordMarkdown(tt.md, 2000), "\n---part---\n")
			if got != tt.want {
				t.Errorf("DiscordMarkdown(%q)\n got %q\nwant %q", tt.md, got, tt.want)
			}
		})
	}
}

func TestDiscordMarkdownNeutralisesMentions(t *testing.T) {
	tests := []struct {
		name, md, want string
	}{
		{"everyone and here", "hi @everyone and @here", "hi @" + zw + "everyone and @" + zw + "here"},
		{"any case", "@EveryOne @HERE", "@" + zw + "EveryOne @" + zw + "HERE"},
		{"user and role mentions", "<@123> <@!45> <@&678>", `\<` + zw + `@123> \<` + zw + `@!45> \<` + zw + `@&678>`},
		{"channel mention escaped", "<#789>", `\<#789>`},
		{"in inline code", "`@everyone <@1>`", "`@" + zw + "everyone <" + zw + "@1>`"},
		{"in code block", "```\n@here\n<@1>\n```", "```\n@" + zw + "here\n<" + zw + "@1>\n```"},
		{"in link label", "[@everyone](https://x.io)", "[@" + zw + "everyone](https://x.io)"},
		{"in bold", "**@here**", "**@" + zw + "here**"},
		{"in quote", "> @everyone", "> @" + zw + "everyone"},
		{"escaped in markdown", `\<@123>`, `\<` + zw + `@123>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parts := DiscordMarkdown(tt.md, 2000)
			got := strings.Join(parts, "\n---part---\n")
			if got != tt.want {
				t.Errorf("DiscordMarkdown(%q)\n got %q\nwant %q", tt.md, got, tt.want)
			}
			for _, p := range parts {
				if err := checkDiscordPart(p, 2000); err != nil {
					t.Errorf("part %q: %v", p, err)
				}
			}
		})
	}
}

func TestDiscordMarkdownSplitsCodeBlockIntoFencedBlocks(t *testing.T) {
	var md strings.Builder
	md.WriteString("Here is the code:\n\n```python\n")
	var lines []string
	for i := range 300 {
		line := fmt.Sprintf("print(%d, 'a_b * c')", i)
		lines = append(lines, line)
		md.WriteString(line + "\n")
	}
	md.WriteString("```\n\nDone.")
	parts := DiscordMarkdown(md.String(), 2000)
	checkDiscordParts(t, md.String(), parts, 2000)
	if len(parts) < 3 {
		t.Fatalf("%d characters in %d parts", md.Len(), len(parts))
	}
	var code strings.Builder
	for i, p := range parts {
		body := strings.TrimPrefix(p, "Here is the code:")
		body = strings.TrimSuffix(strings.TrimLeft(body, "\n"), "Done.")
		body = strings.TrimRight(body, "\n")
		if body == "" {
			continue
		}
		if !strings.HasPrefix(body, "```python\n") || !strings.HasSuffix(body, "\n```") {
			t.Fatalf("part %d is not one fenced python block:\n%s", i, body)
		}
		code.WriteString(strings.TrimSuffix(strings.TrimPrefix(body, "```python\n"), "\n```") + "\n")
	}
	if !strings.HasPrefix(parts[0], "Here is the code:") || !strings.HasSuffix(parts[len(parts)-1], "\n\nDone.") {
		t.Errorf("intro or outro lost: starts %q, ends %q", parts[0][:17], parts[len(parts)-1])
	}
	if got := code.String(); got != strings.Join(lines, "\n")+"\n" {
		t.Errorf("code lines changed by splitting:\n%s", got)
	}
}

func TestDiscordMarkdownSplitsQuotesAndStyles(t *testing.T) {
	md := "> " + strings.TrimSpace(strings.Repeat("quoted **bold words** here ", 12)) + "\n\n" +
		"**" + strings.TrimSpace(strings.Repeat("long bold ", 20)) + "**"
	parts := DiscordMarkdown(md, 100)
	checkDiscordParts(t, md, parts, 100)
	quoted := 0
	for _, p := range parts {
		if strings.HasPrefix(p, "> ") {
			quoted++
			if strings.Contains(p, "\n") && !strings.Contains(p, "\n> ") {
				t.Errorf("quote part %q has a line without the marker", p)
			}
		}
		if strings.Count(p, "**")%2 != 0 {
			t.Errorf("part %q leaves bold open", p)
		}
	}
	if quoted < 2 {
		t.Errorf("the quote spans %d parts, want it reopened in each: %q", quoted, parts)
	}
}

func TestDiscordMarkdownLongMixedDocument(t *testing.T) {
	var md strings.Builder
	for i := range 40 {
		fmt.Fprintf(&md, "## Step %d\n\nRun `cmd_%d` with **care** and read [the docs](https://x.io/%d).\n\n", i, i, i)
		fmt.Fprintf(&md, "- item @everyone <@%d>\n- another *item*\n\n> note %d\n> more\n\n```sh\necho %d\n```\n\n", i, i, i)
	}
	for _, limit := range []int{2000, 500, 120} {
		parts := DiscordMarkdown(md.String(), limit)
		checkDiscordParts(t, md.String(), parts, limit)
	}
}

// FuzzDiscordMarkdown checks DiscordMarkdown's promises on any input: every
// part within the limit, fences balanced, no live mention, and no text lost
// by splitting.
func FuzzDiscordMarkdown(f *testing.F) {
	f.Add("**bold** *it* `code` [l](https://x.io) <@1> @everyone a_b", uint16(20))
	f.Add("```go\nfunc main() {\n\tprintln(\"```\")\n}\n```", uint16(40))
	f.Add("> quote **b\n> c** [l](https://x.io)\n> > nested", uint16(30))
	f.Add("- a\n  - b\n- [x] c\n\n| t | u |\n|---|---|\n| 1 | 2 |", uint16(16))
	f.Add("**see https://x.io/a_b** \\# \\- 1\\. ||x|| ~~y~~", uint16(25))
	f.Add(strings.Repeat("😀@here", 30), uint16(17))
	f.Add("*00*0*00*0\x8900000\x890](https://00\" )0000000000000000", uint16(20))
	f.Fuzz(func(t *testing.T, md string, l uint16) {
		limit := MinLimit + int(l)%3000
		parts := DiscordMarkdown(md, limit)
		for i, p := range parts {
			if err := checkDiscordPart(p, limit); err != nil {
				t.Fatalf("limit %d, part %d %q: %v", limit, i, p, err)
			}
		}
		whole := DiscordMarkdown(md, 1<<30)
		if len(whole) > 1 {
			t.Fatalf("unlimited render split into %d parts", len(whole))
		}
		if got, want := discordVisible(parts), discordVisible(whole); got != want {
			t.Fatalf("limit %d lost text:\n got %q\nwant %q", limit, got, want)
		}
	})
}

func BenchmarkDiscordMarkdown(b *testing.B) {
	var md strings.Builder
	for i := range 50 {
		fmt.Fprintf(&md, "## Part %d\n\nSome **bold** and `code` with a [link](https://x.io/%d) and snake_case.\n\n```go\nx := %d\n```\n\n", i, i, i)
	}
	s := md.String()
	b.ReportAllocs()
	for b.Loop() {
		DiscordMarkdown(s, 2000)
	}
}

// checkDiscordParts checks every part and that the parts together show all
// the text of the unsplit rendering.
func checkDiscordParts(t *testing.T, md string, parts []string, limit int) {
	t.Helper()
	if len(parts) == 0 {
		t.Fatal("no parts")
	}
	for i, p := range parts {
		if err := checkDiscordPart(p, limit); err != nil {
			t.Errorf("part %d/%d %q: %v", i+1, len(parts), p, err)
		}
	}
	whole := DiscordMarkdown(md, 1<<30)
	if got, want := discordVisible(parts), discordVisible(whole); got != want {
		t.Errorf("split lost text:\n got %q\nwant %q", got, want)
	}
}

// liveFence matches a code fence: three backticks, the first not escaped.
var liveFence = regexp.MustCompile("(^|[^\\\\])```")

// liveMention matches what Discord could read as a mention.
var liveMention = regexp.MustCompile(`(?i)@everyone|@here|<@`)

// checkDiscordPart reports how part breaks DiscordMarkdown's promises:
// longer than limit UTF-16 units, invalid UTF-8, an odd number of code
// fences, a mention Discord could parse, or no visible text.
func checkDiscordPart(part string, limit int) error {
	if !utf8.ValidString(part) {
		return fmt.Errorf("invalid UTF-8")
	}
	if n := utf16Len(part); n > limit {
		return fmt.Errorf("%d UTF-16 units, limit %d", n, limit)
	}
	if n := len(liveFence.FindAllString(part, -1)); n%2 != 0 {
		return fmt.Errorf("%d code fences: one is left open", n)
	}
	if m := liveMention.FindString(part); m != "" {
		return fmt.Errorf("live mention %q", m)
	}
	if strings.TrimFunc(part, unicode.IsSpace) == "" {
		return fmt.Errorf("no visible text")
	}
	return nil
}

var (
	fenceOpener = regexp.MustCompile("```[a-z0-9_+#.-]*\n")
	linkTarget  = regexp.MustCompile(`(^|[^\\])\]\([^)]*\)`)
)

// discordVisible returns the letters and digits parts show, ignoring fence
// languages and link targets (which splitting repeats or may drop).
func discordVisible(parts []string) string {
	var b strings.Builder
	for _, p := range parts {
		p = fenceOpener.ReplaceAllString(p, "")
		p = linkTarget.ReplaceAllString(p, "$1")
		for _, r := range p {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				b.WriteRune(r)
			}
		}
	}
	return b.String()
}
