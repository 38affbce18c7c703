package config

import (
	"slices"
	"strings"
)

// validateFallbacks checks llm.fallbacks: each a model name, none the
// model itself (it has been tried already) or listed twice.
func (c *Config) validateFallbacks(add func(string, ...any)) {
	for i, m := range c.LLM.Fallbacks {
		switch {
		case strings.TrimSpace(m) == "":
			add("llm.fallbacks[%d] is empty: name a model, or remove the entry", i)
		case m == c.LLM.Model:
			add("llm.fallbacks[%d] is %q, llm.model itself: a fallback must be another model", i, m)
		case slices.Contains(c.LLM.Fallbacks[:i], m):
			add("llm.fallbacks[%d]: %q is listed twice", i, m)
		}
	}
}
