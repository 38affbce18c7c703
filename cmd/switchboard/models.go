package main

import (
	"fmt"

	"github.com/switchboard-chat/switchboard/bot/modelswitch"
)

// newModelSwitch builds /model's switch among models:, each entry's
// provider built like llm's (retries, then fallbacks on llm's server).
func (d *daemon) newModelSwitch() (*modelswitch.Switch, error) {
	models := make([]modelswitch.Model, 0, len(d.cfg.Models))
	for _, m := range d.cfg.Models {
		llm := d.cfg.ModelLLM(m)
		p, err := newProvider(llm, d.log.With("model_entry", m.Name))
		if err != nil {
			return nil, fmt.Errorf("models %s: %w", m.Name, err)
		}
		models = append(models, modelswitch.Model{Name: m.Name, Model: llm.Model, Vision: llm.Vision, Provider: p})
	}
	return modelswitch.New(models, d.cfg.LLM.Model, d.st.db, d.log), nil
}
