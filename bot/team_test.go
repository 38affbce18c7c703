package bot_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/teams"
)

var taskNumber = regexp.MustCompile(`#(\d+)`)

// blockerBrain: the lead (model m) gives ops a task and waits silently;
// ops claims it and reports a blocker; the lead answers what it heard.
func blockerBrain(r llmtest.Request) llmtest.Reply {
	last := r.Messages[len(r.Messages)-1]
	switch r.Model {
	case "m":
		switch {
		case last.Role == "user" && strings.HasPrefix(last.Content, "teammate:"):
			return llmtest.Reply{Text: "lead heard: " + last.Content}
		case last.Role == "user":
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "team_tasks",
				Arguments: `{"action":"create","subject":"fix the database","assignee":"ops"}`}}}
		}
		return llmtest.Reply{Text: bot.SilentReply}
	case "m-ops":
		m := taskNumber.FindStringSubmatch(last.Content)
		switch {
		case last.Role == "user" && m != nil:
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "team_tasks", Arguments: `{"action":"claim","task_id":` + m[1] + `}`}}}
		case last.Role == "tool" && strings.HasPrefix(last.Content, "you claimed") && m != nil:
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "team_tasks",
				Arguments: fmt.Sprintf(`{"action":"comment","task_id":%s,"type":"blocker","text":"no access to the database"}`, m[1])}}}
		}
		return llmtest.Reply{Text: "ops is done"}
	}
	return llmtest.Reply{Text: "?"}
}

// TestTeamBlockerReachesTheLead: a task for ops wakes ops in its team
// session; its blocker reaches the lead in the chat at once, and the lead's
// answer is the only message the chat gets (its silent turn and ops'
// replies are not sent, now or by recovery).
func TestTeamBlockerReachesTheLead(t *testing.T) {
	p := startPipeline(t, pipelineOptions{Team: true, Agents: []string{"ops"}})
	p.llm.Handle(blockerBrain)
	ctx := context.Background()
	p.router.Handle(ctx, msg("c1", "u1", "the database is down, get it fixed"))
	got := p.ch.WaitFor(t, "c1", 1)
	if !strings.HasPrefix(got[0].Text, "lead heard: teammate: ops reported a blocker on task #") ||
		!strings.Contains(got[0].Text, "(fix the database): no access to the database") {
		t.Fatalf("chat got %q", got[0].Text)
	}
	ops, err := p.db.Load(ctx, "ops/team:crew:test:c1", 0)
	if err != nil || len(ops) == 0 || !strings.HasPrefix(ops[0].Content, "[Task #") {
		t.Fatalf("ops' team session = %+v, %v; want it to start with the task", ops, err)
	}
	time.Sleep(time.Second)
	if n, err := p.router.Recover(ctx, 0); err != nil || n != 0 {
		t.Fatalf("recovery picked up %d sessions (%v); everything is finished", n, err)
	}
	if msgs := p.ch.SentTo("c1"); len(msgs) != 1 {
		t.Fatalf("the chat got %d messages; want only the lead's answer", len(msgs))
	}
}

// TestTeamRepeatsAnAnnouncementLostToACrash: a task left pending with
// nobody told (its creator's run crashed before the step ended) is
// announced again by the team pump, once per process, and its assignee
// gets it in its team session.
func TestTeamRepeatsAnAnnouncementLostToACrash(t *testing.T) {
	p := startPipeline(t, pipelineOptions{Team: true, Agents: []string{"ops"}})
	p.llm.Handle(func(r llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "will do, later"} })
	ctx := context.Background()
	task, err := p.db.CreateTask(ctx, teams.Task{Team: "crew", Subject: "rotate the keys", Assignee: "ops",
		CreatedBy: "default", Origin: "test:c9"})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := p.teams.Reannounce(ctx, "crew"); err != nil || n != 1 {
		t.Fatalf("first pass announced %d (%v), want 1", n, err)
	}
	want := fmt.Sprintf("[Task #%d for you, from default] rotate the keys", task.ID)
	bot.WaitUntil(t, "ops has the task in its team session", func() bool {
		msgs, err := p.db.Load(ctx, "ops/team:crew:test:c9", 0)
		return err == nil && len(msgs) > 0 && strings.HasPrefix(msgs[0].Content, want)
	})
	// Still pending (ops did not claim it), but announced again only once.
	if n, err := p.teams.Reannounce(ctx, "crew"); err != nil || n != 0 {
		t.Fatalf("second pass announced %d (%v), want 0", n, err)
	}
}
