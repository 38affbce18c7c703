package bot_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/teams"
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
		if got := p.ch.WaitFor(t, chat, 1)[0].Text; !strings.Contains(got, "echo: hello from "+chat) {
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
	list := p.ch.WaitFor(t, "team-a", 2)[1].Text
	for _, line := range []string{"- default — no description (model m)", "- ops — the ops agent (model m-ops)",
		"- writer — the writer agent (model m-writer) ← answers in this chat"} {
		if !strings.Contains(list, line) {
			t.Errorf("/agents lacks %q:\n%s", line, list)
		}
	}
	p.router.Handle(ctx, msg("ops-room", "u1", "/status"))
	if st := p.ch.WaitFor(t, "ops-room", 2)[1].Text; !strings.Contains(st, "Agent: ops") {
		t.Errorf("/status in ops-room = %q", st)
	}
}

// TestContextCommand: admins list, set, show and clear the context files
// of the agent of their chat; others may not.
func TestContextCommand(t *testing.T) {
	p := startPipeline(t, pipelineOptions{Access: bot.AccessOptions{Admins: []string{"test:boss"}}})
	ctx := context.Background()
	say := func(user, text string, n int) string {
		t.Helper()
		p.router.Handle(ctx, msg("room", user, text))
		return p.ch.WaitFor(t, "room", n)[n-1].Text
	}
	if got := say("dev", "/context", 1); !strings.Contains(got, "Only admins") {
		t.Fatalf("non-admin /context = %q", got)
	}
	if got := say("boss", "/context set SOUL.md Be brief and kind.", 2); !strings.Contains(got, "Saved SOUL.md for agent default") {
		t.Fatalf("set = %q", got)
	}
	if got := say("boss", "/context SOUL.md", 3); !strings.Contains(got, "Be brief and kind.") {
		t.Fatalf("show = %q", got)
	}
	if got := say("boss", "/context", 4); !strings.Contains(got, "- SOUL.md (18 bytes)") || !strings.Contains(got, "- USER.md (not set)") {
		t.Fatalf("list = %q", got)
	}
	if got := say("boss", "/context set NOTES.md x", 5); !strings.Contains(got, "is not a context file") {
		t.Fatalf("unknown name = %q", got)
	}
	if got := say("boss", "/context clear SOUL.md", 6); !strings.Contains(got, "Cleared SOUL.md") {
		t.Fatalf("clear = %q", got)
	}
	if got := say("boss", "/context SOUL.md", 7); !strings.Contains(got, "not set") {
		t.Fatalf("show after clear = %q", got)
	}
}

// TestTasksCommand: /tasks shows the open tasks of the team of the chat's
// agent.
func TestTasksCommand(t *testing.T) {
	p := startPipeline(t, pipelineOptions{})
	ctx := context.Background()
	p.router.Handle(ctx, msg("room", "u1", "/tasks"))
	if got := p.ch.WaitFor(t, "room", 1)[0].Text; !strings.Contains(got, "Team crew (lead default) has no open tasks") {
		t.Fatalf("/tasks on an empty board = %q", got)
	}
	if _, err := p.db.CreateTask(ctx, teams.Task{Team: "crew", Subject: "check the backups", CreatedBy: "default"}); err != nil {
		t.Fatal(err)
	}
	p.router.Handle(ctx, msg("room", "u1", "/tasks"))
	if got := p.ch.WaitFor(t, "room", 2)[1].Text; !strings.Contains(got, "[pending] check the backups — unclaimed, 0%") {
		t.Fatalf("/tasks = %q", got)
	}
}
