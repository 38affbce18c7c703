package config

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPricesLoad: model names with dots are kept whole (no phantom price
// for the part before the dot), and a field no price has is named.
func TestPricesLoad(t *testing.T) {
	file := filepath.Join(t.TempDir(), "c.yaml")
	yaml := "llm:\n  prices: {\"gpt-4.1\": {input: 2, output: 8, cache_read: 0.5}, \"Claude-Sonnet-4.5\": {input: 3, cache_write: 3.75}}\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(LoadOptions{File: file, Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Price{"gpt-4.1": {Input: 2, Output: 8, CacheRead: 0.5}, "Claude-Sonnet-4.5": {Input: 3, CacheWrite: 3.75}}
	if len(c.LLM.Prices) != len(want) {
		t.Fatalf("prices = %+v", c.LLM.Prices)
	}
	for k, v := range want {
		if c.LLM.Prices[k] != v {
			t.Errorf("price of %s = %+v, want %+v", k, c.LLM.Prices[k], v)
		}
	}

	if err := os.WriteFile(file, []byte("llm:\n  prices: {m: {inptu: 2}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(LoadOptions{File: file, Environ: []string{}}); err == nil || !strings.Contains(err.Error(), "llm.prices[m]: unknown field inptu") {
		t.Errorf("misspelt field: err = %v", err)
	}
}

// TestValidatePrices: negative, absurd and not-a-number prices are
// refused with the key and the allowed range; sane ones pass.
func TestValidatePrices(t *testing.T) {
	c := Defaults()
	c.LLM.Prices = map[string]Price{"ok": {Input: 2, Output: 8}, "neg": {Output: -1}, "huge": {CacheRead: 1e9},
		"nan": {CacheWrite: math.NaN()}, " ": {}}
	var got []string
	c.validatePrices(func(f string, args ...any) { got = append(got, f) })
	all := strings.Join(got, "\n")
	if len(got) != 4 {
		t.Errorf("%d problems, want 4:\n%s", len(got), all)
	}
	c.LLM.Prices = map[string]Price{"neg": {Output: -1}}
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "llm.prices[neg].output must be dollars per million tokens, from 0 to 100000 (got -1)") {
		t.Errorf("Validate = %v", err)
	}
}
