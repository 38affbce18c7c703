package markup

import (
	"strings"
	"testing"
)

func TestTelegramHTMLFormatting(t *testing.T) {
	tests := []struct {
		name, md, want string
	}{
		{"bold italic strike", "**b** *i* _i_ __b__ ~~s~~", "<b>b</b> <i>i</i> <i>i</i> <b>b</b> <s>s</s>"},
		{"single tilde is text", "takes ~5 min, ~10 at most", "takes ~5 min, ~10 at most"},
		{"nested styles", "***both*** **bold *and it***", "<i><b>both</b></i> <b>bold <i>and it</i></b>"},
		{"same style not reopened", "# A **b** c", "<b>A b c</b>"},
		{"inline code", "run `go test ./...` now", "run <code>go test ./...</code> now"},
		{"code moves out of bold", "**use `x` now**", "<b>use </b><code>x</code><b> now</b>"},
		{"code escapes", "`a < b && c > d`", "<code>a &lt; b &amp;&amp; c &gt; d</code>"},
		{"heading", "## Status\nall good", "<b>Status</b>\n\nall good"},
		{"setext heading", "Title\n=====", "<b>Title</b>"},
		{"paragraphs", "one\n\ntwo", "one\n\ntwo"},
		{"soft and hard breaks kept", "a\nb  \nc\\\nd", "a\nb\nc\nd"},
		{"bullets", "- a\n- b\n* c", "• a\n• b\n\n• c"},
		{"numbered from start", "3. c\n4. d", "3. c\n4. d"},
		{"nested list", "- a\n  - b\n    - c\n- d", "• a\n  • b\n    • c\n• d"},
		{"list item paragraphs", "- a\n\n  more\n- b", "• a\n  more\n• b"},
		{"task list", "- [x] done\n- [ ] todo", "• ☑ done\n• ☐ todo"},
		{"list after paragraph", "Steps:\n\n1. a\n2. b", "Steps:\n\n1. a\n2. b"},
		{"fenced code with language", "```go\nfunc f() {}\n```", `<pre><code class="language-go">func f() {}</code></pre>`},
		{"fenced code without language", "```\nx := 1\n```", "<pre>x := 1</pre>"},
		{"odd language dropped", "```go\"><b>\nx\n```", "<pre>x</pre>"},
		{"indented code", "    a < b\n    c", "<pre>a &lt; b\nc</pre>"},
		{"code in list item", "- see:\n\n  ```sh\n  ls\n  ```", "• see:\n  <pre><code class=\"language-sh\">ls</code></pre>"},
		{"empty code block dropped", "```\n\n```\n\ntext", "text"},
		{"quote", "> wise words", "<blockquote>wise words</blockquote>"},
		{"quote keeps styles", "> **bold** and *it*", "<blockquote><b>bold</b> and <i>it</i></blockquote>"},
		{"nested quote flattened", "> a\n>\n> > b", "<blockquote>a\nb</blockquote>"},
		{"quote link becomes text", "> see [docs](https://d.io)", "<blockquote>see docs (https://d.io)</blockquote>"},
		{"quote code becomes text", "> run `x`\n>\n> ```\n> y\n> ```", "<blockquote>run x\ny</blockquote>"},
		{"thematic break", "a\n\n---\n\nb", "a\n\n———\n\nb"},
		{"table as text", "| a | b |\n|---|---|\n| 1 | **2** |", "a | b\n1 | 2"},
		{"link", "[docs](https://example.com/a?b=1&c=2)", `<a href="https://example.com/a?b=1&amp;c=2">docs</a>`},
		{"link with styled label", "[**go** here](https://x.io)", `<a href="https://x.io"><b>go</b> here</a>`},
		{"link label code is text", "[`cmd`](https://x.io)", `<a href="https://x.io">cmd</a>`},
		{"tg link", "[me](tg://user?id=42)", `<a href="tg://user?id=42">me</a>`},
		{"mailto link", "[mail](mailto:a@b.c)", `<a href="mailto:a@b.c">mail</a>`},
		{"autolink", "<https://x.io/p>", `<a href="https://x.io/p">https://x.io/p</a>`},
		{"email autolink", "<a@b.io>", `<a href="mailto:a@b.io">a@b.io</a>`},
		{"bare url left to the client", "see https://x.io", "see https://x.io"},
		{"javascript link is text", "[click](javascript:alert(1))", "click"},
		{"relative link is text", "[file](./README.md)", "file"},
		{"data link is text", "[x](data:text/html,hi)", "x"},
		{"http without host is text", "[x](http:foo)", "x"},
		{"image becomes link", "![chart](https://i.io/c.png)", `<a href="https://i.io/c.png">chart</a>`},
		{"image with bad url is alt", "![chart](file:///etc/passwd)", "chart"},
		{"quote in href escaped", `[x](<https://a.io/?q="y">)`, `<a href="https://a.io/?q=&quot;y&quot;">x</a>`},
		{"entities resolved", "&copy; &#35; &amp; \\*", "© # &amp; *"},
		{"crlf line endings", "a\r\nb\r\n\r\n```\r\nx\r\ny\r\n```", "a\nb\n\n<pre>x\ny</pre>"},
		{"image without alt or good url", "![](javascript:x)", ""},
		{"empty input", "", ""},
		{"whitespace only", "  \n\n \t", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parts := TelegramHTML(tt.md, 4096)
			got := strings.Join(parts, "\n---part---\n")
			if got != tt.want {
				t.Errorf("TelegramHTML(%q)\n got %q\nwant %q", tt.md, got, tt.want)
			}
			for _, p := range parts {
				if err := checkPart(p, 4096); err != nil {
					t.Errorf("part %q: %v", p, err)
				}
			}
		})
	}
}

func TestTelegramHTMLHostileText(t *testing.T) {
	tests := []struct {
		name, md, want string
	}{
		{"script tag", "<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"},
		{"ampersand", "a & b && c", "a &amp; b &amp;&amp; c"},
		{"comparison", "if a<b and c>d", "if a&lt;b and c&gt;d"},
		{"unbalanced bold", "**bold and *it", "**bold and *it"},
		{"unbalanced code", "`open code", "`open code"},
		{"raw html block", "<div onclick=\"x\">\n<b>hi</b>\n</div>", "&lt;div onclick=\"x\"&gt;\n&lt;b&gt;hi&lt;/b&gt;\n&lt;/div&gt;"},
		{"inline raw html", "say <b>hi</b> <a href=\"javascript:x\">y</a>", "say &lt;b&gt;hi&lt;/b&gt; &lt;a href=\"javascript:x\"&gt;y&lt;/a&gt;"},
		{"html comment", "<!-- secret -->", "&lt;!-- secret --&gt;"},
		{"fake entity", "&notanentity; &#xZZ;", "&amp;notanentity; &amp;#xZZ;"},
		{"escaped entity-looking text", "AT&T;", "AT&amp;T;"},
		{"invalid utf-8", "a\xffb", "a\uFFFDb"},
		{"nul byte", "a\x00b", "a\uFFFDb"},
		{"tag in code block", "```html\n<b>&amp;</b>\n```", `<pre><code class="language-html">&lt;b&gt;&amp;amp;&lt;/b&gt;</code></pre>`},
		{"tag in link label", "[<i>x</i>](https://x.io)", `<a href="https://x.io">&lt;i&gt;x&lt;/i&gt;</a>`},
		{"nested link", "[a [b](https://b.io)](https://a.io)", `[a <a href="https://b.io">b</a>](https://a.io)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parts := TelegramHTML(tt.md, 4096)
			got := strings.Join(parts, "\n---part---\n")
			if got != tt.want {
				t.Errorf("TelegramHTML(%q)\n got %q\nwant %q", tt.md, got, tt.want)
			}
			for _, p := range parts {
				if err := checkPart(p, 4096); err != nil {
					t.Errorf("part %q: %v", p, err)
				}
			}
		})
	}
}

func TestTelegramText(t *testing.T) {
	tests := []struct{ in, want string }{
		{`<b>a &amp; b</b> <a href="https://x.io/?a=1&amp;b=2">link</a>`, "a & b link"},
		{`<pre><code class="language-go">x &lt; y</code></pre>`, "x < y"},
		{"plain", "plain"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := TelegramText(tt.in); got != tt.want {
			t.Errorf("TelegramText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
