package agentcore_test

import (
	"math"
	"testing"

	"github.com/switchboard-chat/switchboard/agentcore"
)

func TestPricesCostEveryKindAndSnapshots(t *testing.T) {
	p := agentcore.Prices{"gpt-4.1": {Input: 2, Output: 8, CacheRead: 0.5}, "gpt-4.1-mini": {Input: 0.4, Output: 1.6}, "Claude-X": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}}
	u := agentcore.Usage{InputTokens: 1_000_000, OutputTokens: 500_000, CacheReadTokens: 2_000_000, CacheWriteTokens: 1_000_000}
	for _, tc := range []struct {
		model string
		want  float64
		known bool
	}{
		{"gpt-4.1", 2 + 4 + 1 + 2, true}, // no cache_write price: the input price
		{"GPT-4.1-2025-04-14", 2 + 4 + 1 + 2, true},
		{"gpt-4.1-mini-2025-04-14", 0.4 + 0.8 + 0.8 + 0.4, true},
		{"claude-x", 3 + 7.5 + 0.6 + 3.75, true},
		{"gpt-4.10", 0, false},
		{"other", 0, false},
	} {
		got, known := p.Cost(tc.model, u)
		if known != tc.known || math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("Cost(%q) = %v, %v; want %v, %v", tc.model, got, known, tc.want, tc.known)
		}
	}
}
