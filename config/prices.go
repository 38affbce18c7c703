package config

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxPrice bounds a price (dollars per million tokens): far above any
// model's, low enough that no figure overflows a cost.
const maxPrice = 100_000

// priceKinds are the fields of a price, as the file spells them.
var priceKinds = []string{"input", "output", "cache_read", "cache_write"}

// validatePrices checks llm.prices: a price per model name, each figure
// a finite number of dollars per million tokens, neither negative nor
// absurd.
func (c *Config) validatePrices(add func(string, ...any)) {
	for _, model := range slices.Sorted(maps.Keys(c.LLM.Prices)) {
		p := c.LLM.Prices[model]
		if strings.TrimSpace(model) == "" {
			add("llm.prices: a price needs a model name")
		}
		for i, v := range []float64{p.Input, p.Output, p.CacheRead, p.CacheWrite} {
			if math.IsNaN(v) || v < 0 || v > maxPrice {
				add("llm.prices[%s].%s must be dollars per million tokens, from 0 to %d (got %v)", model, priceKinds[i], maxPrice, v)
			}
		}
	}
}

// filePrices reads llm.prices from the YAML file itself: model names
// hold dots ("gpt-4.1"), which viper would split into nested keys,
// leaving a phantom free "gpt-4" price. It replaces c.LLM.Prices when
// the file sets them, and returns the fields no price has.
func (c *Config) filePrices(data []byte) ([]string, error) {
	var raw struct {
		LLM struct {
			Prices map[string]map[string]float64 `yaml:"prices"`
		} `yaml:"llm"`
	}
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("llm.prices: %w", err)
	}
	if raw.LLM.Prices == nil {
		return nil, nil
	}
	var problems []string
	prices := make(map[string]Price, len(raw.LLM.Prices))
	for model, fields := range raw.LLM.Prices {
		var p Price
		for kind, v := range fields {
			switch kind {
			case "input":
				p.Input = v
			case "output":
				p.Output = v
			case "cache_read":
				p.CacheRead = v
			case "cache_write":
				p.CacheWrite = v
			default:
				problems = append(problems, fmt.Sprintf("llm.prices[%s]: unknown field %s (a price has %s)", model, kind, strings.Join(priceKinds, ", ")))
			}
		}
		prices[model] = p
	}
	slices.Sort(problems)
	c.LLM.Prices = prices
	return problems, nil
}
