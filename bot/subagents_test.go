package bot_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/approvals"
	"github.com/switchboard-chat/switchboard/bot/subagents"
	"github.com/switchboard-chat/switchboard/tools"
)

// subBrain scripts a parent agent and its subagents (the same agent, told
// apart by what they were sent).
func subBrain(r llmtest.Request) llmtest.Reply {
	last := r.Messages[len(r.Messages)-1]
	text := last.Content
	switch {
	case last.Role == "user" && strings.HasPrefix(text, "[Task from default"):
		task, _, _ := strings.Cut(strings.TrimPrefix(text, "[Task from default, the agent that spawned you] "), "\n")
		switch {
		case strings.Contains(task, "block"):
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "block", Arguments: `{}`}}}
		case strings.Contains(task, "slow"):
			return llmtest.Reply{Delay: time.Minute, Text: "too late"}
		}
		return llmtest.Reply{Text: "sub result for: " + task}
	case last.Role == "user" && strings.HasPrefix(text, "[Subagent"):
		return llmtest.Reply{Text: "parent heard: " + text}
	case last.Role == "user" && (strings.HasPrefix(text, "spawn ") || strings.HasPrefix(text, "run ")):
		action, task, _ := strings.Cut(text, " ")
		args, _ := json.Marshal(map[string]string{"action": action, "task": task})
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "spawn", Arguments: string(args)}}}
	case last.Role == "tool":
		return llmtest.Reply{Text: "tool said: " + text}
	}
	return llmtest.Reply{Text: "?"}
}

// blockTool runs until its call is cancelled and reports how it ended.
type blockTool struct {
	started chan struct{}
	ended   chan error
}

func (*blockTool) Name() string                 { return "block" }
func (*blockTool) Description() string          { return "waits until stopped" }
func (*blockTool) Parameters() json.RawMessage  { return json.RawMessage(`{"type":"object"}`) }
func (*blockTool) SideEffect() tools.SideEffect { return tools.SideEffectNone }
func (b *blockTool) Execute(ctx context.Context, _ json.RawMessage) tools.Result {
	b.started <- struct{}{}
	<-ctx.Done()
	b.ended <- ctx.Err()
	return tools.Result{ForLLM: "stopped"}
}

func subPipeline(t *testing.T, o subagents.Options, extra ...tools.Tool) *pipeline {
	p := startPipeline(t, pipelineOptions{Subagents: &o,
		Tools: func(*approvals.Service) []tools.Tool { return append([]tools.Tool{tools.Datetime{}}, extra...) }})
	p.llm.Handle(subBrain)
	return p
}

// TestSubagentAnnouncesItsResult: an async spawn answers at once; the
// subagent runs without the tools subagents never get (it is not offered
// spawn: depth 1 is the deepest), and its result reaches the parent as a
// message, which the parent answers in the chat.
func TestSubagentAnnouncesItsResult(t *testing.T) {
	p := subPipeline(t, subagents.Options{})
	p.router.Handle(context.Background(), msg("c1", "u1", "spawn summarise the logs"))
	// The parent answers the spawn ("tool said: spawned …") unless the
	// result is in its session before its next model call (steer mode):
	// then it answers the result straight away.
	var heard string
	bot.WaitUntil(t, "the announced result to be answered", func() bool {
		for _, m := range p.ch.SentTo("c1") {
			if strings.Contains(m.Text, "parent heard: [Subagent summarise the logs (") {
				heard = m.Text
				return true
			}
		}
		return false
	})
	if !strings.Contains(heard, "completed]\nsub result for: summarise the logs") {
		t.Fatalf("reply = %q; want the announced result", heard)
	}
	for _, r := range p.llm.Requests() {
		first := r.Messages[len(r.Messages)-1].Content
		isSub := strings.HasPrefix(first, "[Task from default")
		if isSub && slices.Contains(r.Tools, "spawn") {
			t.Errorf("the subagent was offered spawn: %v", r.Tools)
		}
		if strings.HasPrefix(first, "spawn ") && !slices.Contains(r.Tools, "spawn") {
			t.Errorf("the parent was not offered spawn: %v", r.Tools)
		}
	}
}

// TestSubagentRunWaitsForTheResult: spawn run returns the result to the
// tool call; nothing is announced on top.
func TestSubagentRunWaitsForTheResult(t *testing.T) {
	p := subPipeline(t, subagents.Options{})
	p.router.Handle(context.Background(), msg("c1", "u1", "run count the files"))
	got := p.ch.WaitFor(t, "c1", 1)
	if !strings.Contains(got[0].Text, "completed: sub result for: count the files") {
		t.Fatalf("reply = %q", got[0].Text)
	}
	time.Sleep(2 * time.Second) // an announcement would wake the parent within 1 s
	if n := len(p.ch.SentTo("c1")); n != 1 {
		t.Fatalf("%d messages in the chat; want only the answer", n)
	}
}

// TestSubagentLimits: five children per conversation, eight running across
// the daemon (counted in Redis, so another replica sees the same count),
// no spawning from a subagent at the deepest level; cancelling frees slots.
func TestSubagentLimits(t *testing.T) {
	p := subPipeline(t, subagents.Options{MaxConcurrent: 8, MaxChildren: 5, MaxDepth: 1})
	ctx := context.Background()
	call := func(chat string) tools.Call {
		return tools.Call{Channel: "test", ChatID: chat, Agent: "default", Session: "default/test:" + chat}
	}
	spawn := func(chat string) error {
		_, err := p.subagents.Spawn(ctx, call(chat), "slow work", "", false)
		return err
	}
	t.Cleanup(func() {
		for _, c := range []string{"c1", "c2", "c3"} {
			_, _ = p.subagents.CancelSubagents(ctx, call(c), "all")
		}
	})
	for range 5 {
		if err := spawn("c1"); err != nil {
			t.Fatal(err)
		}
	}
	if err := spawn("c1"); !errors.Is(err, tools.ErrSubagentLimit) || !strings.Contains(err.Error(), "you already run 5/5 subagents") {
		t.Fatalf("6th child: %v", err)
	}
	for range 3 {
		if err := spawn("c2"); err != nil {
			t.Fatal(err)
		}
	}
	err := spawn("c3")
	if !errors.Is(err, tools.ErrSubagentLimit) || !strings.Contains(err.Error(), "at capacity 8/8 subagents running across the daemon") {
		t.Fatalf("9th spawn: %v", err)
	}
	// Another replica on the same Redis sees the same count.
	slot, err := p.rdb.AcquireSubagent(ctx, "elsewhere", "default/test:c9", 8, 5, time.Minute)
	if err != nil || slot.Got || slot.Running != 8 {
		t.Fatalf("another replica's acquire = %+v, %v; want refused at 8", slot, err)
	}
	// A subagent cannot spawn: depth 1 is the deepest.
	sub := call("c1")
	sub.Session = "default/" + tools.SubScope("abcd1234", "default/test:c1")
	if _, err := p.subagents.Spawn(ctx, sub, "deeper", "", false); !errors.Is(err, tools.ErrSubagentLimit) || !strings.Contains(err.Error(), "depth 1") {
		t.Fatalf("depth-2 spawn: %v", err)
	}
	// Cancelling c1's five frees their slots.
	done, err := p.subagents.CancelSubagents(ctx, call("c1"), "all")
	if err != nil || len(done) != 5 {
		t.Fatalf("cancel all = %d, %v", len(done), err)
	}
	bot.WaitUntil(t, "the cancelled subagents to stop", func() bool {
		subs, _ := p.subagents.Subagents(ctx, call("c1"))
		return len(subs) == 5 && !slices.ContainsFunc(subs, func(s tools.Subagent) bool { return s.Status != tools.SubCancelled })
	})
	if err := spawn("c3"); err != nil {
		t.Fatalf("spawn after the cancel: %v", err)
	}
}

// TestSubagentCancelStopsItsToolCall: cancel reaches the subagent's running
// tool call (its context ends), the subagent ends as cancelled, and the
// parent is not told (it asked).
func TestSubagentCancelStopsItsToolCall(t *testing.T) {
	block := &blockTool{started: make(chan struct{}, 1), ended: make(chan error, 1)}
	p := subPipeline(t, subagents.Options{}, block)
	ctx := context.Background()
	call := tools.Call{Channel: "test", ChatID: "c1", Agent: "default", Session: "default/test:c1"}
	sub, err := p.subagents.Spawn(ctx, call, "block until told", "blocker", false)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-block.started:
	case <-time.After(30 * time.Second):
		t.Fatal("the subagent's tool call never started")
	}
	done, err := p.subagents.CancelSubagents(ctx, call, "last")
	if err != nil || len(done) != 1 || done[0].ID != sub.ID {
		t.Fatalf("cancel last = %+v, %v", done, err)
	}
	select {
	case err := <-block.ended:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("tool call ended with %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the tool call was not stopped")
	}
	bot.WaitUntil(t, "the subagent to end cancelled", func() bool {
		subs, _ := p.subagents.Subagents(ctx, call)
		return len(subs) == 1 && subs[0].Status == tools.SubCancelled
	})
	if n, err := p.router.Recover(ctx, 0); err != nil || n != 0 {
		t.Fatalf("recovery picked up %d sessions (%v); a cancelled subagent is finished", n, err)
	}
	if msgs := p.ch.SentTo("c1"); len(msgs) != 0 {
		t.Fatalf("the chat got %q; the parent asked for the cancel", msgs[0].Text)
	}
}

// TestSubagentSteer: steer stops a subagent (its tool call ends) and
// starts one on the new task, whose result is announced to the parent.
func TestSubagentSteer(t *testing.T) {
	block := &blockTool{started: make(chan struct{}, 1), ended: make(chan error, 1)}
	p := subPipeline(t, subagents.Options{}, block)
	call := tools.Call{Channel: "test", ChatID: "c1", Agent: "default", Session: "default/test:c1"}
	ctx := tools.WithCall(context.Background(), call)
	spawn := &tools.Spawn{S: p.subagents}
	first, err := p.subagents.Spawn(ctx, call, "block until told", "digger", false)
	if err != nil {
		t.Fatal(err)
	}
	<-block.started
	res := spawn.Execute(ctx, json.RawMessage(`{"action":"steer","id":"`+first.ID+`","task":"summarise the logs instead"}`))
	if res.IsError || !strings.Contains(res.ForLLM, "stopped "+first.ID+" and spawned") {
		t.Fatalf("steer = %+v", res)
	}
	if err := <-block.ended; !errors.Is(err, context.Canceled) {
		t.Fatalf("the first subagent's tool call ended with %v", err)
	}
	got := p.ch.WaitFor(t, "c1", 1)
	if !strings.Contains(got[0].Text, "parent heard: [Subagent digger (") || !strings.Contains(got[0].Text, "sub result for: summarise the logs instead") {
		t.Fatalf("chat got %q; want the steered subagent's result", got[0].Text)
	}
	list := spawn.Execute(ctx, json.RawMessage(`{"action":"list"}`))
	if !strings.Contains(list.ForLLM, first.ID+" [cancelled] digger") || !strings.Contains(list.ForLLM, "[completed] digger") {
		t.Fatalf("list = %q", list.ForLLM)
	}
	// One that ended longer than archive_after (60 min) ago is archived.
	old := tools.Subagent{ID: "0ld0ld00", Parent: call.Session, Label: "ancient", Status: tools.SubCompleted,
		Started: time.Now().Add(-3 * time.Hour), Finished: time.Now().Add(-2 * time.Hour)}
	if err := p.rdb.SaveSubagent(ctx, old, time.Hour); err != nil {
		t.Fatal(err)
	}
	if list := spawn.Execute(ctx, json.RawMessage(`{"action":"list"}`)); strings.Contains(list.ForLLM, "ancient") {
		t.Fatalf("an archived subagent is listed: %q", list.ForLLM)
	}
}
