package markup

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkParts checks every part and that the parts together show all the
// text of the unsplit rendering.
func checkParts(t *testing.T, md string, parts []string, limit int) {
	t.Helper()
	for i, p := range parts {
		if err := checkPart(p, limit); err != nil {
			t.Errorf("part %d/%d %q: %v", i+1, len(parts), p, err)
		}
	}
	whole := TelegramHTML(md, 1<<30)
	if got, want := visibleText(parts), visibleText(whole); got != want {
		t.Errorf("split lost text:\n got %q\nwant %q", got, want)
	}
}

func TestSplitPrefersBlockBoundaries(t *testing.T) {
	a := strings.Repeat("a", 30)
	b := strings.Repeat("b", 30)
	c := strings.Repeat("c", 30)
	md := a + "\n\n" + b + "\n\n" + c
	parts := TelegramHTML(md, 70)
	want := []string{a + "\n\n" + b, c}
	if fmt.Sprint(parts) != fmt.Sprint(want) {
		t.Fatalf("parts = %q, want %q", parts, want)
	}
}

func TestSplitParagraphAtLinesThenWords(t *testing.T) {
	lines := []string{"first line of the paragraph", "second line of it", "third"}
	md := strings.Join(lines, "\n")
	parts := TelegramHTML(md, 50)
	want := []string{lines[0] + "\n" + lines[1], lines[2]}
	if fmt.Sprint(parts) != fmt.Sprint(want) {
		t.Fatalf("parts = %q, want %q", parts, want)
	}

	words := strings.Repeat("word ", 40)
	parts = TelegramHTML(words, 32)
	checkParts(t, words, parts, 32)
	for _, p := range parts {
		if strings.HasPrefix(p, "ord") || strings.HasSuffix(p, "wor") {
			t.Errorf("part %q cut inside a word", p)
		}
	}
}

func TestSplitKeepsStylesBalanced(t *testing.T) {
	md := "**" + strings.TrimSpace(strings.Repeat("bold words ", 20)) + "** and *" + strings.TrimSpace(strings.Repeat("it ", 30)) + "*"
	parts := TelegramHTML(md, 60)
	if len(parts) < 3 {
		t.Fatalf("want several parts, got %q", parts)
	}
	checkParts(t, md, parts, 60)
	if !strings.HasPrefix(parts[1], "<b>") {
		t.Errorf("second part %q does not reopen the bold span", parts[1])
	}
}

func TestSplitCodeBlockByLines(t *testing.T) {
	var lines []string
	for i := range 200 {
		lines = append(lines, fmt.Sprintf("fmt.Println(%d, \"a < b && c\")", i))
	}
	md := "Intro.\n\n```go\n" + strings.Join(lines, "\n") + "\n```\n\nOutro."
	const limit = 500
	parts := TelegramHTML(md, limit)
	checkParts(t, md, parts, limit)
	var got []string
	for _, p := range parts {
		body, ok := strings.CutPrefix(p, `<pre><code class="language-go">`)
		if !ok {
			continue
		}
		body, rest, ok := strings.Cut(body, "</code></pre>")
		if !ok || (rest != "" && rest != "\n\nOutro.") {
			t.Fatalf("code part %q does not end with its code block", p)
		}
		got = append(got, TelegramText(body))
	}
	if len(got) < 2 {
		t.Fatalf("code block not split: %q", parts)
	}
	if strings.Join(got, "\n") != strings.Join(lines, "\n") {
		t.Errorf("code parts do not hold whole lines in order:\n%q", got)
	}
	if parts[0] != "Intro." || !strings.HasSuffix(parts[len(parts)-1], "</code></pre>\n\nOutro.") {
		t.Errorf("intro/outro not kept out of the code: first %q last %q", parts[0], parts[len(parts)-1])
	}
}

func TestSplitNeverCutsSurrogatePairsOrEntities(t *testing.T) {
	tests := []string{
		strings.Repeat("😀", 50),
		strings.Repeat("a😀", 50),
		strings.Repeat("&", 60),
		strings.Repeat("a<b", 40),
		"`" + strings.Repeat("&<>", 30) + "`",
	}
	for _, md := range tests {
		for limit := MinLimit; limit < 40; limit++ {
			parts := TelegramHTML(md, limit)
			for _, p := range parts {
				if !utf8.ValidString(p) {
					t.Fatalf("limit %d: part %q is not valid UTF-8", limit, p)
				}
			}
			checkParts(t, md, parts, limit)
		}
	}
}

func TestSplitDropsMarkupThatLeavesNoRoom(t *testing.T) {
	href := "https://example.com/" + strings.Repeat("p", 100)
	md := "[label text](" + href + ")"
	parts := TelegramHTML(md, 64)
	checkParts(t, md, parts, 64)
	if got := TelegramText(strings.Join(parts, "")); got != "label text" {
		t.Errorf("visible text = %q, want the label", got)
	}
	if whole := TelegramHTML(md, 4096); !strings.Contains(whole[0], href) {
		t.Errorf("with room the link is kept, got %q", whole)
	}
}

func TestSplitTinyLimitIsRaised(t *testing.T) {
	parts := TelegramHTML("hello world, this is long", 1)
	for _, p := range parts {
		if err := checkPart(p, MinLimit); err != nil {
			t.Errorf("part %q: %v", p, err)
		}
	}
	if len(parts) < 2 {
		t.Errorf("want the text split at MinLimit, got %q", parts)
	}
}

func TestSplitLongMixedDocument(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Report\n\n")
	for i := range 40 {
		fmt.Fprintf(&b, "Paragraph %d has **bold**, *italic*, `code` and a [link](https://example.com/%d).\n\n", i, i)
	}
	b.WriteString("> " + strings.Repeat("quoted text ", 100) + "\n\n")
	b.WriteString("- " + strings.Repeat("item\n- ", 100) + "last\n\n")
	b.WriteString("```\n" + strings.Repeat("0123456789 ", 500) + "\n```\n")
	md := b.String()
	if len(md) < 10000 {
		t.Fatalf("document too short: %d", len(md))
	}
	parts := TelegramHTML(md, 4096)
	if len(parts) < 3 {
		t.Fatalf("want several parts, got %d", len(parts))
	}
	checkParts(t, md, parts, 4096)
}
