package scrub

import (
	"strings"
	"testing"
)

// TestScrubOfOrdinaryTextReusesItsIndex: the normalised index of a short
// message is pooled, so scrubbing ordinary replies does not allocate one
// for each, and a reused index leaves nothing of the previous text behind.
func TestScrubOfOrdinaryTextReusesItsIndex(t *testing.T) {
	x := newSecretIndex([]string{normalize("hunter2hunter2"), normalize("sk-LiveKEY0123456789")})
	if !x.any("a long one: sk-live-key-0123456789 ok") || x.any("short") || !x.any("HUNTER2 hunter2") {
		t.Fatal("the index does not find its secrets after reuse")
	}
	if got := scrubNormalized("say h u n t e r 2 H U N T E R 2 twice", x); !strings.Contains(got, Redacted) {
		t.Errorf("scrubNormalized = %q, want the spaced-out secret redacted", got)
	}
	if allocs := testing.AllocsPerRun(100, func() { x.any("an ordinary reply about the weather, in ünïcode too") }); allocs > 0 && !raceEnabled {
		t.Errorf("checking a short ordinary text allocated %.1f times, want none", allocs)
	}
	long := strings.Repeat("ordinary ", maxPooledText/8) + "hunter2hunter2"
	if !x.any(long) {
		t.Error("a text too long for the pool: its secret was not found")
	}
}
