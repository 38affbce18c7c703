package telegramtest

import (
	"strings"
	"testing"
)

func TestParseHTML(t *testing.T) {
	valid := []struct{ in, visible string }{
		{"plain > text", "plain > text"},
		{"<b>b</b> <strong>s</strong> <i>i</i> <em>e</em> <u>u</u> <ins>n</ins> <s>s</s> <del>d</del>", "b s i e u n s d"},
		{`<a href="https://x.io/?a=1&amp;b=2">link</a>`, "link"},
		{`<pre><code class="language-go">x &lt; y</code></pre>`, "x < y"},
		{"<code>&quot;&#65;&#x42;</code>", `"AB`},
		{"<b><i>both</i></b> <b><a href='https://x.io'>l</a></b> <a href=https://x.io><b>l</b></a>", "both l l"},
		{"<blockquote><b>q</b></blockquote><blockquote expandable>e</blockquote>", "qe"},
		{`<span class="tg-spoiler">s</span><tg-spoiler>t</tg-spoiler>`, "st"},
		{"<B>upper</B>", "upper"},
	}
	for _, tt := range valid {
		got, err := ParseHTML(tt.in)
		if err != nil || got != tt.visible {
			t.Errorf("ParseHTML(%q) = %q, %v; want %q", tt.in, got, err, tt.visible)
		}
	}
	invalid := []struct{ in, want string }{
		{"<b>open", "Can't find end tag"},
		{"close</b>", "unexpected end tag"},
		{"<b><i>x</b></i>", "Unmatched end tag"},
		{"<script>x</script>", "Unsupported start tag \"script\""},
		{"<span>x</span>", "Unsupported start tag"},
		{"1 <2 and 3> 2", "Unsupported start tag \"2\""},
		{"a <b", "unclosed start tag"},
		{"a & b", "unescaped '&'"},
		{"&nbsp;", "unescaped '&'"},
		{"&#0;", "unescaped '&'"},
		{"<a>x</a>", "link without href"},
		{"<code><b>x</b></code>", "can't be nested in <code>"},
		{"<pre><b>x</b></pre>", "can't be nested in <pre>"},
		{"<pre><i><code>x</code></i></pre>", "can't be nested in <pre>"},
		{`<code class="language-go">x</code>`, "code class outside pre"},
		{"<blockquote><blockquote>x</blockquote></blockquote>", "blockquote entities can't contain blockquote"},
		{`<a href="https://x.io"><code>x</code></a>`, "text_link entities can't contain code"},
		{`<blockquote><a href="https://x.io">x</a></blockquote>`, "blockquote entities can't contain text_link"},
	}
	for _, tt := range invalid {
		_, err := ParseHTML(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseHTML(%q) err = %v, want %q", tt.in, err, tt.want)
		}
	}
}
