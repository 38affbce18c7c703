package config

import (
	"slices"
	"testing"
)

// TestLoadFallbacks: llm.fallbacks is a YAML list or a comma string, and
// SWITCHBOARD_LLM_FALLBACKS a comma list that wins over the file.
func TestLoadFallbacks(t *testing.T) {
	for name, tt := range map[string]struct {
		file string
		env  []string
		want []string
	}{
		"yaml list":   {file: "llm:\n  model: a\n  fallbacks: [b, c]\n", want: []string{"b", "c"}},
		"yaml string": {file: "llm:\n  model: a\n  fallbacks: \"b, c\"\n", want: []string{"b", "c"}},
		"env":         {file: "llm:\n  model: a\n  fallbacks: [x]\n", env: []string{"SWITCHBOARD_LLM_FALLBACKS=b,c"}, want: []string{"b", "c"}},
		"unset":       {file: "llm:\n  model: a\n"},
	} {
		c := mustLoad(t, LoadOptions{File: writeFile(t, tt.file), Environ: tt.env})
		if !slices.Equal(c.LLM.Fallbacks, tt.want) {
			t.Errorf("%s: llm.fallbacks = %q, want %q", name, c.LLM.Fallbacks, tt.want)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("%s: Validate = %v", name, err)
		}
	}
}

// TestLLMForFallbacks: an agent on llm's server keeps llm.fallbacks; one
// on another provider or base URL has none (they are models of llm's
// server).
func TestLLMForFallbacks(t *testing.T) {
	c := Defaults()
	c.LLM.BaseURL, c.LLM.Model, c.LLM.Fallbacks = "http://llm.example/v1", "a", []string{"b"}
	for _, tt := range []struct {
		agent NamedAgent
		want  []string
	}{
		{NamedAgent{Name: "same", Model: "m"}, []string{"b"}},
		{NamedAgent{Name: "same-url", BaseURL: "http://llm.example/v1"}, []string{"b"}},
		{NamedAgent{Name: "other-url", BaseURL: "http://other.example/v1"}, nil},
		{NamedAgent{Name: "other-provider", Provider: "anthropic"}, nil},
	} {
		if got := c.LLMFor(tt.agent).Fallbacks; !slices.Equal(got, tt.want) {
			t.Errorf("%s: fallbacks = %q, want %q", tt.agent.Name, got, tt.want)
		}
	}
}
