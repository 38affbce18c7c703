package bot_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/tools"
)

// modelOf returns the model that answered the newest request containing
// text.
func modelOf(p *pipeline, text string) string {
	model := ""
	for _, r := range p.llm.Requests() {
		for _, m := range r.Messages {
			if m.Content == text {
				model = r.Model
			}
		}
	}
	return model
}

// TestHandoffRoutesTheChat: /handoff sends the chat to another agent (its
// next message is answered by that agent's model, which got a note); the
// route survives a flush of Redis (restored from Postgres); /handoff and
// /status show it; /handoff back returns the chat; the note is never sent
// to the chat.
func TestHandoffRoutesTheChat(t *testing.T) {
	p := startPipeline(t, pipelineOptions{Agents: []string{"ops", "writer"}, Handoff: true})
	ctx := context.Background()
	say := func(text string, n int) string {
		t.Helper()
		p.router.Handle(ctx, msg("room", "u1", text))
		return p.ch.WaitFor(t, "room", n)[n-1].Text
	}
	say("hello", 1)
	if got := say("/handoff ops", 2); !strings.Contains(got, "Now talking to ops (handed off by default: asked by test:u1)") {
		t.Fatalf("handoff notice = %q", got)
	}
	if got := say("are you ops?", 3); !strings.Contains(got, "echo: are you ops?") || modelOf(p, "are you ops?") != "m-ops" {
		t.Fatalf("after the handoff: %q by %q", got, modelOf(p, "are you ops?"))
	}
	// ops got the note with the conversation so far.
	msgs, err := p.db.Load(ctx, "ops/test:room", 0)
	if err != nil || len(msgs) == 0 || !strings.Contains(msgs[0].Content, "[Handoff] default handed this conversation to you") ||
		!strings.Contains(msgs[0].Content, "user: hello") {
		t.Fatalf("ops session = %+v, %v", msgs, err)
	}
	// Redis loses everything: Postgres restores the route.
	flushPrefix(t, p)
	if got := say("still ops?", 4); modelOf(p, "still ops?") != "m-ops" {
		t.Fatalf("after a Redis flush the chat went to %q (%q)", modelOf(p, "still ops?"), got)
	}
	if got := say("/handoff", 5); !strings.Contains(got, "ops answers here, handed off by default") {
		t.Fatalf("/handoff = %q", got)
	}
	if got := say("/status", 6); !strings.Contains(got, "Agent: ops") || !strings.Contains(got, "Handed off to ops by default") {
		t.Fatalf("/status = %q", got)
	}
	if got := say("/handoff nobody", 7); !strings.Contains(got, `there is no agent "nobody"`) {
		t.Fatalf("unknown agent = %q", got)
	}
	if got := say("/handoff back", 8); !strings.Contains(got, "Back to default (handed back from ops)") {
		t.Fatalf("/handoff back = %q", got)
	}
	if got := say("and now?", 9); modelOf(p, "and now?") != "m" {
		t.Fatalf("after handing back: %q by %q", got, modelOf(p, "and now?"))
	}
	for _, m := range p.ch.WaitFor(t, "room", 9) {
		if strings.Contains(m.Text, "[Handoff]") {
			t.Fatalf("the handoff note reached the chat: %q", m.Text)
		}
	}
}

// TestHandoffToolAndLoops: an agent hands the chat over with the tool; an
// agent that is not answering there cannot; handing straight back within a
// minute to the agent that handed over is refused as a loop.
func TestHandoffToolAndLoops(t *testing.T) {
	p := startPipeline(t, pipelineOptions{Agents: []string{"ops", "writer"}, Handoff: true})
	ctx := context.Background()
	tool := &tools.Handoff{H: p.handoff}
	call := func(agent, args string) tools.Result {
		c := tools.Call{Channel: "test", ChatID: "room", UserID: "test:u1", Agent: agent, Session: agent + "/test:room"}
		return tool.Execute(tools.WithCall(ctx, c), []byte(args))
	}
	if r := call("default", `{"agent":"ops","reason":"an outage question"}`); r.IsError {
		t.Fatalf("default → ops: %+v", r)
	}
	if r := call("default", `{"agent":"writer"}`); !r.IsError || !strings.Contains(r.ForLLM, "with ops now") {
		t.Fatalf("an agent that no longer answers handed off: %+v", r)
	}
	if r := call("ops", `{"agent":"writer","reason":"needs a write-up"}`); r.IsError {
		t.Fatalf("ops → writer: %+v", r)
	}
	if r := call("writer", `{"agent":"ops"}`); !r.IsError || !strings.Contains(r.ForLLM, "loop") {
		t.Fatalf("writer → ops within a minute: %+v", r)
	}
	if r := call("writer", `{"action":"back"}`); r.IsError || !strings.Contains(r.ForLLM, "Back to default") {
		t.Fatalf("back: %+v", r)
	}
	if got := p.handoff.AgentAt(ctx, channels.Address{Platform: "test", ChatID: "room"}); got != "default" {
		t.Fatalf("after back the chat is with %q", got)
	}
	notes, _ := p.db.Load(ctx, "writer/test:room", 0)
	if len(notes) != 1 || !strings.Contains(notes[0].Content, "ops handed this conversation to you (writer): needs a write-up") ||
		notes[0].Role != agentcore.RoleAssistant {
		t.Fatalf("writer's note = %+v", notes)
	}
}

// flushPrefix deletes every Redis key of the pipeline, like a FLUSHALL
// limited to this test's prefix.
func flushPrefix(t *testing.T, p *pipeline) {
	t.Helper()
	ctx := context.Background()
	c := p.rdb.Client()
	keys, err := c.Keys(ctx, p.rdb.Prefix()+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) == 0 {
		t.Fatal("no keys to flush: the route was not cached in Redis")
	}
	if err := c.Del(ctx, keys...).Err(); err != nil {
		t.Fatal(err)
	}
}
