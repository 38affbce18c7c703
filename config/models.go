package config

import (
	"slices"
	"strings"
)

// ModelEntry is one model chats may be switched to with /model (models:,
// file only). Provider, BaseURL and APIKey default to llm's.
type ModelEntry struct {
	// Name is what /model NAME calls it.
	Name string `mapstructure:"name"`
	// Provider is openai or anthropic; default llm.provider.
	Provider string `mapstructure:"provider"`
	// BaseURL is its server; default llm.base_url.
	BaseURL string `mapstructure:"base_url"`
	// APIKey authenticates there; default llm.api_key.
	APIKey string `mapstructure:"api_key" secret:"true"`
	// Model is its id on the server.
	Model string `mapstructure:"model"`
	// Vision says it reads images.
	Vision bool `mapstructure:"vision"`
}

// ModelLLM is the llm settings that reach entry m: llm's, with m's
// provider, server, key and model, and no fallbacks of llm's own unless m
// is on llm's server.
func (c *Config) ModelLLM(m ModelEntry) LLM {
	l := c.LLM
	l.Provider = cmpOr(m.Provider, l.Provider)
	sameServer := (m.BaseURL == "" || m.BaseURL == l.BaseURL) && l.Provider == c.LLM.Provider
	l.BaseURL = cmpOr(m.BaseURL, l.BaseURL)
	l.APIKey = cmpOr(m.APIKey, l.APIKey)
	l.Model, l.Vision = m.Model, m.Vision
	if !sameServer {
		l.Fallbacks = nil // fallbacks name models of llm's server
	}
	l.Fallbacks = slices.DeleteFunc(slices.Clone(l.Fallbacks), func(f string) bool { return f == m.Model })
	return l
}

// cmpOr is the first of a and b that is not "".
func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// validateModels checks models: names unique, not "default" and not
// empty, a model id each, a known provider.
func (c *Config) validateModels(add func(string, ...any)) {
	for i, m := range c.Models {
		switch {
		case strings.TrimSpace(m.Name) == "":
			add("models[%d] needs a name (what /model NAME calls it)", i)
		case m.Name == "default":
			add("models[%d]: the name default is taken by /model default (the agent's own model)", i)
		case slices.ContainsFunc(c.Models[:i], func(o ModelEntry) bool { return o.Name == m.Name }):
			add("models[%d]: the name %q is used twice", i, m.Name)
		}
		if strings.TrimSpace(m.Model) == "" {
			add("models[%d] (%s) needs a model, its id on the server", i, m.Name)
		}
		if m.Provider != "" && !slices.Contains([]string{"openai", "anthropic"}, m.Provider) {
			add("models[%d] (%s): provider must be openai or anthropic (got %q)", i, m.Name, m.Provider)
		}
	}
}
