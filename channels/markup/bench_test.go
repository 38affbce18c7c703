package markup

import (
	"fmt"
	"strings"
	"testing"
)

func BenchmarkTelegramHTML(b *testing.B) {
	var sb strings.Builder
	for i := range 60 {
		fmt.Fprintf(&sb, "## Step %d\n\nSome **bold**, *italic*, `code` and a [link](https://example.com/%d) & more.\n\n- item a\n- item b\n\n", i, i)
	}
	sb.WriteString("```go\n" + strings.Repeat("fmt.Println(\"hello, world\")\n", 100) + "```\n")
	md := sb.String()
	b.SetBytes(int64(len(md)))
	for b.Loop() {
		TelegramHTML(md, 4096)
	}
}
