package main

import (
	"fmt"

	"github.com/switchboard-chat/switchboard/bot/knowledge"
	"github.com/switchboard-chat/switchboard/tools"
)

// knowledgeTool returns knowledge_graph_search over the stored graph.
func (d *daemon) knowledgeTool() tools.Tool {
	return knowledge.NewTool(knowledge.ToolOptions{Graph: d.st.db, AgentKind: agentKinds(d.cfg)})
}

// newKnowledgeWorker returns the worker extracting the knowledge graph
// from memory documents, or nil when knowledge.extract is off: each
// agent's documents by knowledge.model (else the agent's own model) on the
// agent's provider, metered like the agents' calls.
func (d *daemon) newKnowledgeWorker() (*knowledge.Worker, error) {
	if !d.cfg.Knowledge.Extract {
		return nil, nil
	}
	models := map[string]knowledge.Model{}
	for _, spec := range agentSpecs(d.cfg) {
		llm := d.cfg.LLMFor(spec)
		p, err := d.agentProvider(llm)
		if err != nil {
			return nil, fmt.Errorf("knowledge extraction for agent %s: %w", spec.Name, err)
		}
		m := knowledge.Model{Provider: p, Name: llm.Model, MaxTokens: llm.MaxTokens}
		if d.cfg.Knowledge.Model != "" {
			m.Name = d.cfg.Knowledge.Model
		}
		models[spec.Name] = m
	}
	return knowledge.NewWorker(knowledge.Options{
		Store: d.st.db, Meter: d.meter, Logger: d.log,
		Models: func(agent string) (knowledge.Model, error) {
			m, ok := models[agent]
			if !ok {
				return knowledge.Model{}, fmt.Errorf("agent %s is not configured (any more); its documents' facts stay as they are", agent)
			}
			return m, nil
		},
	}), nil
}
