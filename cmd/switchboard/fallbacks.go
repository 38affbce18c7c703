package main

import (
	"reflect"
	"slices"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/config"
)

// modelFallbacks is the provider of one llm setting with llm.fallbacks.
type modelFallbacks struct {
	llm config.LLM
	f   *agentcore.Fallbacks
}

// agentProvider returns the provider of an agent with settings llm. The
// agents with the same settings and fallbacks share one, so that /status
// tells one story per model: which of them failed, which answered.
func (d *daemon) agentProvider(llm config.LLM) (agentcore.Provider, error) {
	for _, m := range d.fallbacks {
		if reflect.DeepEqual(m.llm, llm) {
			return m.f, nil
		}
	}
	p, err := newProvider(llm, d.log)
	if err != nil {
		return nil, err
	}
	if f, ok := p.(*agentcore.Fallbacks); ok {
		d.fallbacks = append(d.fallbacks, modelFallbacks{llm: llm, f: f})
	}
	return p, nil
}

// fallbackStatusLines say, for /status, how each model with fallbacks is
// doing on this replica: answered by a fallback since when, or not.
func (d *daemon) fallbackStatusLines() []string {
	var out []string
	for _, m := range d.fallbacks {
		if line := m.f.StatusLine(m.llm.Model); !slices.Contains(out, line) {
			out = append(out, line)
		}
	}
	return out
}
