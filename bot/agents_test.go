package bot_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/bot"
)

// TestBindingsChooseTheAgent: bindings send each chat to its agent (with
// its own model and session), the first match wins, a trailing * matches
// a prefix, unbound chats get the default agent, and /agents and /status
// say who answers.
func TestBindingsChooseTheAgent(t *testing.T) {
	p := startPipeline(t, pipelineOptions{
		Agents: []string{"ops", "writer"},
		Bindings: []bot.Binding{
			{Chat: "test:ops-room", Agent: "ops"},
			{Chat: "test:team-*", Agent: "writer"},
			{Chat: "test:team-ops", Agent: "ops"}, // shadowed by the wildcard above
		},
	})
	ctx := context.Background()
	want := map[string]string{"ops-room": "m-ops", "team-a": "m-writer", "team-ops": "m-writer", "lobby": "m"}
	for chat := range want {
		p.router.Handle(ctx, msg(chat, "u1", "hello from "+chat))
	}
	for chat := range want {
		if got := p.ch.waitFor(t, chat, 1)[0].Text; !strings.Contains(got, "echo: hello from "+chat) {
			t.Errorf("%s answered %q", chat, got)
		}
	}
	models := map[string]string{}
	for _, r := range p.llm.Requests() {
		for chat := range want {
			for _, m := range r.Messages {
				if m.Content == "hello from "+chat {
					models[chat] = r.Model
				}
			}
		}
	}
	for chat, model := range want {
		if models[chat] != model {
			t.Errorf("chat %s was answered by model %q, want %q", chat, models[chat], model)
		}
	}
	var sessions []string
	rows, err := p.db.Pool().Query(ctx, `SELECT key FROM sessions ORDER BY key`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, k)
	}
	if strings.Join(sessions, " ") != "default/test:lobby ops/test:ops-room writer/test:team-a writer/test:team-ops" {
		t.Errorf("sessions = %v; want one per agent and chat", sessions)
	}

	p.router.Handle(ctx, msg("team-a", "u1", "/agents"))
	list := p.ch.waitFor(t, "team-a", 2)[1].Text
	for _, line := range []string{"- default — no description (model m)", "- ops — the ops agent (model m-ops)",
		"- writer — the writer agent (model m-writer) ← answers in this chat"} {
		if !strings.Contains(list, line) {
			t.Errorf("/agents lacks %q:\n%s", line, list)
		}
	}
	p.router.Handle(ctx, msg("ops-room", "u1", "/status"))
	if st := p.ch.waitFor(t, "ops-room", 2)[1].Text; !strings.Contains(st, "Agent: ops") {
		t.Errorf("/status in ops-room = %q", st)
	}
}
