package scrub_test

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/tools/scrub"
)

const formSecret = "Zq9vT4mK2pLx8wR"

// TestScrubSecretInEveryForm: a configured secret is redacted however it is
// written: re-cased, split over lines, spaced out, with invisible
// characters or Markdown between its letters, or encoded whole.
func TestScrubSecretInEveryForm(t *testing.T) {
	s := scrub.New(formSecret)
	pct := ""
	for _, c := range []byte(formSecret) {
		pct += fmt.Sprintf("%%%02X", c)
	}
	forms := map[string]string{
		"upper":           strings.ToUpper(formSecret),
		"lower":           strings.ToLower(formSecret),
		"two lines":       "Zq9vT4m\nK2pLx8wR",
		"crlf and indent": "Zq9vT4m\r\n    K2pLx8wR",
		"spaced":          "Z q 9 v T 4 m K 2 p L x 8 w R",
		"zero width":      "Z\u200bq9v\u200cT4mK\u200d2pLx\u20608wR\ufeff",
		"soft hyphen":     "Zq9vT4m\u00adK2pLx8wR",
		"bidi":            "Zq9v\u202eT4mK2pLx8wR",
		"dashes":          "Zq9v-T4mK-2pLx-8wR",
		"bold split":      "**Zq9vT4m**K2pLx8wR",
		"code split":      "`Zq9v`T4mK2pLx8wR",
		"underscores":     "Zq9v_T4mK2_pLx8wR",
		"mixed":           "ZQ9V T4MK\n2PLX-8WR",
		"base64":          base64.StdEncoding.EncodeToString([]byte(formSecret)),
		"base64 url raw":  base64.RawURLEncoding.EncodeToString([]byte(formSecret)),
		"hex":             hex.EncodeToString([]byte(formSecret)),
		"HEX":             strings.ToUpper(hex.EncodeToString([]byte(formSecret))),
		"percent":         pct,
		"percent lower":   strings.ToLower(pct),
		"reversed":        reverseString(formSecret),
	}
	for name, form := range forms {
		text := "before " + form + " after"
		got := s.Scrub(text)
		if !strings.Contains(got, scrub.Redacted) || !strings.HasPrefix(got, "before ") || !strings.HasSuffix(got, " after") {
			t.Errorf("%s: %q → %q", name, text, got)
		}
		for _, piece := range []string{"Zq9v", "T4mK", "x8wR", "ZQ9V"} {
			if strings.Contains(got, piece) {
				t.Errorf("%s: %q still shows %q", name, got, piece)
			}
		}
	}
	// Twice, and next to another secret.
	s2 := scrub.New(formSecret, "Other-Secret-77xy")
	got := s2.Scrub("a " + formSecret + " b ZQ9VT4MK2PLX8WR c Other-Secret-77xy" + formSecret)
	if strings.Count(got, scrub.Redacted) < 3 || strings.Contains(got, "77xy") || strings.Contains(got, "Zq9v") {
		t.Errorf("repeated and adjacent secrets: %q", got)
	}
	if !strings.HasPrefix(got, "a ") || !strings.Contains(got, " b ") || !strings.Contains(got, " c ") {
		t.Errorf("text around the secrets was lost: %q", got)
	}
}

func reverseString(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

// ordinaryReplies is text the scrubber must leave alone.
var ordinaryReplies = []string{
	"Sure! Here's a summary of today's incidents:\n\n1. **API latency** rose to 420 ms at 09:14 UTC.\n2. The `billing` job failed twice; retried successfully.",
	"```go\nfunc main() {\n\tfmt.Println(\"hello, world\")\n}\n```",
	"| service | status | p99 |\n|---|---|---|\n| api | ok | 120ms |\n| worker | degraded | 2.3s |",
	"See https://example.com/docs/getting-started?lang=en#install for details.",
	"$ ls -la\ntotal 24\ndrwxr-xr-x  3 dev dev 4096 Nov 24 10:12 .\n-rw-r--r--  1 dev dev  220 Nov 24 10:12 README.md",
	`{"id": 1234, "name": "deploy", "tags": ["prod", "eu-west-1"], "ok": true}`,
	"panic: runtime error: index out of range [3] with length 3\n\ngoroutine 1 [running]:\nmain.main()\n\t/app/main.go:12 +0x1d",
	"The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs.",
	"Meeting notes — Q3 planning: hiring (2 SREs), migrate to Postgres 16, deprecate v1 API by 2026-12-01.",
	"git log --oneline\n3f2a9c1 Fix retry loop\n8be41d0 Add metrics\n0c9e2aa Initial commit",
	"Temperatures this week: Mon 12°C, Tue 14°C, Wed 9°C, Thu 11°C, Fri 15°C.",
	"Die Besprechung ist um 14:00 Uhr. Bitte bringt eure Notizen mit. Danke schön!",
	"日本語のテキストも問題なく表示されます。よろしくお願いします。",
	"Error: connect ECONNREFUSED 127.0.0.1:5432 — is PostgreSQL running? Try `systemctl status postgresql`.",
	"> quoted text\n>> nested quote\n- bullet one\n- bullet two\n  - sub-bullet",
	"Version 1.26.8 (go1.26.8 linux/amd64), build 2026-11-25T03:00:00Z.",
	"SELECT id, name FROM users WHERE created_at > now() - interval '7 days' ORDER BY id LIMIT 50;",
	"The checksum is 9f86d081 for the first file and 60303ae2 for the second.",
	"Ticket ABC-1234 is blocked by ABC-1200; ETA Friday.",
	"docker run --rm -p 8080:8080 -v data:/var/lib/switchboard switchboard:latest serve",
}

// TestScrubLeavesOrdinaryTextAlone: with 50 random secrets configured,
// ordinary replies come back byte for byte.
func TestScrubLeavesOrdinaryTextAlone(t *testing.T) {
	s := scrub.New(randomSecrets(50)...)
	for _, text := range ordinaryReplies {
		if got := s.Scrub(text); got != text {
			t.Errorf("changed:\n%q\n→\n%q", text, got)
		}
	}
}

func randomSecrets(n int) []string {
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	out := make([]string, n)
	for i := range out {
		b := make([]byte, 16+rng.IntN(25))
		for j := range b {
			b[j] = alphabet[rng.IntN(len(alphabet))]
		}
		out[i] = string(b)
	}
	return out
}

// BenchmarkScrub: 50 configured secrets over ~1 MiB of ordinary text.
func BenchmarkScrub(b *testing.B) {
	s := scrub.New(randomSecrets(50)...)
	var sb strings.Builder
	for sb.Len() < 1<<20 {
		for _, r := range ordinaryReplies {
			sb.WriteString(r)
			sb.WriteString("\n\n")
		}
	}
	text := sb.String()
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for range b.N {
		_ = s.Scrub(text)
	}
}
