package telegram_test

import (
	"testing"

	"github.com/switchboard-chat/switchboard/channels/markup"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

// FuzzRenderedHTMLParses checks the Markdown renderer against the fake's
// independent model of Telegram's HTML parser: every part Send would send
// must parse and fit.
func FuzzRenderedHTMLParses(f *testing.F) {
	f.Add("**b** _i_ ~~s~~ `c` [l](https://x.io/?a&b) <script> & > quote", uint16(0))
	f.Add("> **q** [l](tg://user?id=1) `c`\n\n```go\nx := a < b\n```\n- a\n  1. b", uint16(30))
	f.Add("| a | b |\n|---|---|\n| `x` | **y** |\n\n![i](https://i.io/x.png)", uint16(5))
	f.Fuzz(func(t *testing.T, md string, l uint16) {
		limit := markup.MinLimit + int(l)%4096
		for _, part := range markup.TelegramHTML(md, limit) {
			visible, err := telegramtest.ParseHTML(part)
			if err != nil {
				t.Fatalf("part %q: %v", part, err)
			}
			if visible != markup.TelegramText(part) {
				t.Fatalf("part %q: Telegram shows %q, TelegramText says %q", part, visible, markup.TelegramText(part))
			}
			if utf16Len(part) > limit {
				t.Fatalf("part %q is longer than %d", part, limit)
			}
		}
	})
}
