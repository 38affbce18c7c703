package usage

import (
	"fmt"
	"strconv"
	"strings"
)

// describe is a Total as /usage shows it: "1,234 tokens (in 1,000, out
// 200, cache read 30, cache write 4) · 3% of input from cache · $0.0012 ·
// 2 calls".
func describe(t Total) string {
	if t.Calls == 0 {
		return "nothing yet"
	}
	tk := t.Tokens
	parts := []string{fmt.Sprintf("%s tokens (in %s, out %s, cache read %s, cache write %s)",
		count(tk.All()), count(tk.Input), count(tk.Output), count(tk.CacheRead), count(tk.CacheWrite))}
	parts = append(parts, fmt.Sprintf("%.0f%% of input from cache", 100*tk.CacheShare()))
	parts = append(parts, cost(t), plural(t.Calls, "call"))
	return strings.Join(parts, " · ")
}

// brief is a Total in a few words: "1,234 tokens, $0.0012".
func brief(t Total) string {
	if t.Calls == 0 {
		return "nothing"
	}
	return count(t.Tokens.All()) + " tokens, " + cost(t)
}

// cost says what a Total cost, and whether some of it had no price.
func cost(t Total) string {
	d := t.CostDollars()
	if d == nil {
		return "cost unknown (no llm.prices for the model)"
	}
	s := dollars(*d)
	if t.PricedCalls < t.Calls {
		s += fmt.Sprintf(" + %s without a price", plural(t.Calls-t.PricedCalls, "call"))
	}
	return s
}

// dollars formats d: four decimals under a dollar, two above.
func dollars(d float64) string {
	if d < 1 {
		return fmt.Sprintf("$%.4f", d)
	}
	return fmt.Sprintf("$%.2f", d)
}

// count formats n with thousands separators: 1234567 → "1,234,567".
func count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// plural is "1 call", "2 calls".
func plural(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return count(n) + " " + what + "s"
}
