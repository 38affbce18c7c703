package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/config"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/tools"
)

// agentSpecs returns every configured agent: the default one (agent:)
// first, then agents:, each with the default agent's values where it sets
// none.
func agentSpecs(cfg *config.Config) []config.NamedAgent {
	def := config.NamedAgent{
		Name: cfg.Agent.Name, Description: cfg.Agent.Description, SystemPrompt: cfg.Agent.SystemPrompt,
		MaxIterations: cfg.Agent.MaxIterations, HistoryLimit: cfg.Agent.HistoryLimit,
		ContextTokens: cfg.Agent.ContextTokens,
	}
	out := []config.NamedAgent{def}
	for _, a := range cfg.Agents {
		if a.SystemPrompt == "" {
			a.SystemPrompt = def.SystemPrompt
		}
		if a.MaxIterations == 0 {
			a.MaxIterations = def.MaxIterations
		}
		if a.HistoryLimit == 0 {
			a.HistoryLimit = def.HistoryLimit
		}
		if a.ContextTokens == 0 {
			a.ContextTokens = def.ContextTokens
		}
		out = append(out, a)
	}
	return out
}

// rulesOf converts a config tool policy to the policy engine's rules.
func rulesOf(p config.ToolPolicy) tools.PolicyRules {
	r := tools.PolicyRules{Profile: p.Profile, Allow: p.Allow, Deny: p.Deny, AlsoAllow: p.AlsoAllow}
	if len(p.ByProvider) > 0 {
		r.ByProvider = map[string]tools.PolicyRules{}
		for name, sub := range p.ByProvider {
			r.ByProvider[name] = rulesOf(sub)
		}
	}
	return r
}

// policyProblems lists unknown profiles, tools and groups in the global
// and the agents' tool policies.
func policyProblems(cfg *config.Config) []string {
	known := tools.KnownTools(cfg.CustomToolNames()...)
	errs := tools.ValidateRules("tools", rulesOf(cfg.Tools.Policy()), known, config.Suggest)
	for _, a := range cfg.Agents {
		errs = append(errs, tools.ValidateRules("agents["+a.Name+"].tools", rulesOf(a.Tools), known, config.Suggest)...)
	}
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// approvalClasses merges the class decisions: defaults, then
// tools.approvals, then the agent's.
func approvalClasses(cfg *config.Config, a config.NamedAgent) map[string]string {
	out := maps.Clone(config.SideEffectClasses)
	maps.Copy(out, cfg.Tools.Approvals)
	maps.Copy(out, a.Approvals)
	return out
}

// builtAgents are the agents the router and scheduler run.
type builtAgents struct {
	def   *agentcore.Agent
	named map[string]bot.Runner
	info  []bot.AgentInfo
}

// buildAgents makes every configured agent on the shared tool registry:
// each with its own provider and model, the tools its policy allows, and
// a gate applying its side-effect class decisions.
func (d *daemon) buildAgents(reg *tools.Registry, approver tools.Approver) (builtAgents, error) {
	out := builtAgents{named: map[string]bot.Runner{}}
	for i, spec := range agentSpecs(d.cfg) {
		llm := d.cfg.LLMFor(spec)
		provider, err := d.agentProvider(llm)
		if err != nil {
			return out, err
		}
		policy := tools.Policy{Global: rulesOf(d.cfg.Tools.Policy()), Agent: rulesOf(spec.Tools), Provider: llm.Provider}
		allowed := &tools.Allower{Policy: policy, Registry: reg}
		gate := tools.Gate{Classes: approvalClasses(d.cfg, spec), Approver: approver, Logger: d.log}
		kind := agentKind(spec)
		a := &agentcore.Agent{
			Name: spec.Name, Model: llm.Model, SystemPrompt: spec.SystemPrompt,
			Provider: provider, Tools: reg, History: d.st.db,
			MaxIterations: spec.MaxIterations, HistoryLimit: spec.HistoryLimit,
			ContextTokens: spec.ContextTokens, Compactor: d.compactor(),
			MaxTokens: llm.MaxTokens, Logger: d.log, ObserveLLM: d.metrics.ObserveLLM, Tracer: d.tracing.tracer(),
			Meter:     d.meter,
			Queue:     agentcore.QueueMode(d.cfg.Conversation.Queue),
			Vision:    llm.Vision,
			Images:    storedImages{db: d.st.db, maxBytes: d.cfg.Media.MaxBytes},
			AllowTool: allowed.Allows,
			Gate: func(ctx context.Context, call tools.Call, t tools.Tool, args json.RawMessage) (tools.Result, bool) {
				return gate.Check(ctx, call, t, args)
			},
			Context: func(ctx context.Context, call tools.Call) (string, error) {
				text, err := tools.ContextPrompt(ctx, d.st.docs, kind, call)
				if team := teamPrompt(d.cfg, spec.Name); team != "" {
					text = strings.TrimSpace(text + "\n\n" + team)
				}
				// An agent its policy gives no use_skill is not told of skills it cannot read.
				if !allowed.Set()["use_skill"] {
					return text, err
				}
				if section := d.skillsPrompt(ctx, spec.Name); section != "" {
					text = strings.TrimSpace(text + "\n\n" + section)
				}
				return text, err
			},
		}
		d.log.Info("agent ready", "agent", spec.Name, "provider", llm.Provider, "model", llm.Model, "fallbacks", llm.Fallbacks, "vision", llm.Vision, "tools", len(allowed.Set()))
		if i == 0 {
			out.def = a
		} else {
			out.named[spec.Name] = a
		}
		out.info = append(out.info, bot.AgentInfo{Name: spec.Name, Description: spec.Description, Model: llm.Model})
		d.agentTools = append(d.agentTools, agentTools{name: spec.Name, description: spec.Description, model: llm.Model,
			provider: llm.Provider, allowed: allowed, classes: gate.Classes, reg: reg})
	}
	if len(out.named) == 0 {
		out.info = nil // one agent: /agents says so in a line
	}
	return out, nil
}

// storedImages loads the pictures of user messages from the media store
// for agents whose model has vision.
type storedImages struct {
	db       *postgres.DB
	maxBytes int64 // media.max_bytes: nothing larger was stored
}

// LoadImage implements agentcore.ImageLoader.
func (s storedImages) LoadImage(ctx context.Context, sha string) (string, []byte, error) {
	rc, st, err := s.db.OpenMedia(ctx, sha)
	if err != nil {
		return "", nil, fmt.Errorf("open stored image %s: %w", sha, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, s.maxBytes+1))
	if err != nil {
		return "", nil, fmt.Errorf("read stored image %s: %w", sha, err)
	}
	if int64(len(data)) > s.maxBytes {
		return "", nil, fmt.Errorf("stored image %s is larger than media.max_bytes (%d)", sha, s.maxBytes)
	}
	return st.Type, data, nil
}

// agentKind returns an agent's kind, predefined unless set to open.
func agentKind(a config.NamedAgent) string {
	if a.Kind == tools.KindOpen {
		return tools.KindOpen
	}
	return tools.KindPredefined
}

// agentKinds returns the kind of each agent by name, for the tools.
func agentKinds(cfg *config.Config) func(string) string {
	kinds := map[string]string{}
	for _, a := range agentSpecs(cfg) {
		kinds[a.Name] = agentKind(a)
	}
	return func(name string) string { return kinds[name] }
}

// teamOf returns, for an agent, its team (the first it leads or belongs
// to) and that team's lead.
func teamOf(cfg *config.Config) func(string) (string, string, bool) {
	return func(agent string) (string, string, bool) {
		for _, tm := range cfg.Teams {
			if tm.Lead == agent || slices.Contains(tm.Members, agent) {
				return tm.Name, tm.Lead, true
			}
		}
		return "", "", false
	}
}

// teamPrompt is the TEAM.md section only a team's lead gets: its
// teammates and their roles, and how to work with them. Members find
// their context through the tools.
func teamPrompt(cfg *config.Config, agent string) string {
	desc := map[string]string{cfg.Agent.Name: cfg.Agent.Description}
	for _, a := range cfg.Agents {
		desc[a.Name] = a.Description
	}
	var b strings.Builder
	for _, tm := range cfg.Teams {
		if tm.Lead != agent {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("## TEAM.md")
		}
		fmt.Fprintf(&b, "\nYou lead team %s. Your teammates:", tm.Name)
		for _, m := range tm.Members {
			role := desc[m]
			if role == "" {
				role = "no description"
			}
			fmt.Fprintf(&b, "\n- %s: %s", m, role)
		}
		b.WriteString("\nSplit work into tasks with team_tasks (create, with an assignee, and blocked_by for order); talk to " +
			"teammates with team_message. Teammates wake up when a task or message reaches them. Once you have delegated, " +
			"end your turn with exactly " + bot.SilentReply + " if you have nothing for the person yet: when every task of " +
			"this conversation is closed you get the outcomes as \"teammate:\" messages, and then you give the person one final answer.")
	}
	return b.String()
}

// teamMembers returns the agents of a team, lead first.
func teamMembers(cfg *config.Config) func(string) []string {
	return func(team string) []string {
		for _, tm := range cfg.Teams {
			if tm.Name == team {
				return append([]string{tm.Lead}, tm.Members...)
			}
		}
		return nil
	}
}

// bindingsOf converts config bindings.
func bindingsOf(cfg *config.Config) []bot.Binding {
	out := make([]bot.Binding, 0, len(cfg.Bindings))
	for _, b := range cfg.Bindings {
		out = append(out, bot.Binding{Chat: b.Chat, Agent: b.Agent})
	}
	return out
}
