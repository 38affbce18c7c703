package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
)

// teamBrain scripts a lead and two teammates: the lead splits the request
// into two assigned tasks and waits silently; each teammate claims its
// task and completes it; the lead answers once with both outcomes.
type teamBrain struct {
	mu        sync.Mutex
	leadRuns  []string // what each lead request answered
	leadTools []string // the tools the lead's first request offered
}

var taskRef = regexp.MustCompile(`#(\d+)`)

func (b *teamBrain) reply(r llmtest.Request) llmtest.Reply {
	last := r.Messages[len(r.Messages)-1]
	switch r.Model {
	case "lead-model":
		b.mu.Lock()
		if b.leadTools == nil {
			b.leadTools = r.Tools
		}
		b.mu.Unlock()
		switch {
		case last.Role == "user" && strings.Contains(last.Content, "[Team message from dev]"):
			b.note("relay")
			return llmtest.Reply{Text: "dev says: " + strings.TrimPrefix(last.Content, "[Team message from dev] ")}
		case last.Role == "user" && strings.Contains(last.Content, "ask dev"):
			b.note("mail")
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{
				{Name: "team_message", Arguments: `{"action":"send","to":"dev","text":"which version do we ship?"}`}}}
		case last.Role == "user" && strings.Contains(last.Content, "teammate:"):
			b.note("answer")
			return llmtest.Reply{Text: "Release notes ready.\n" + last.Content}
		case last.Role == "user":
			b.note("delegate")
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{
				{Name: "team_tasks", Arguments: `{"action":"create","subject":"collect the changes","assignee":"dev"}`},
				{Name: "team_tasks", Arguments: `{"action":"create","subject":"run the tests","assignee":"qa"}`},
			}}
		default:
			b.note("wait")
			return llmtest.Reply{Text: "NO_REPLY"}
		}
	case "dev-model", "qa-model":
		who := strings.TrimSuffix(r.Model, "-model")
		m := taskRef.FindStringSubmatch(last.Content)
		switch {
		case last.Role == "user" && strings.HasPrefix(last.Content, "[Team message from lead]"):
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "team_message",
				Arguments: `{"action":"send","to":"lead","text":"` + who + ` ships v1.2"}`}}}
		case last.Role == "user" && m != nil:
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "team_tasks", Arguments: `{"action":"claim","task_id":` + m[1] + `}`}}}
		case last.Role == "tool" && strings.HasPrefix(last.Content, "you claimed") && m != nil:
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "team_tasks",
				Arguments: fmt.Sprintf(`{"action":"complete","task_id":%s,"result":"%s finished it"}`, m[1], who)}}}
		default:
			return llmtest.Reply{Text: "done: " + last.Content}
		}
	}
	return llmtest.Reply{Text: "unexpected model " + r.Model}
}

func (b *teamBrain) note(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.leadRuns = append(b.leadRuns, s)
}

func (b *teamBrain) runs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.leadRuns...)
}

// TestE2ETeamLeadAnswersOnce: through the binary, a lead creates two
// tasks; the two teammates are woken, claim and complete them; the lead
// hears both outcomes as "teammate:" messages once the last task closes
// and answers the user's chat exactly once (its silent turn sends nothing).
// /tasks shows the board. Then mail: a message wakes its recipient, whose
// answer by mail wakes the lead in the chat.
func TestE2ETeamLeadAnswersOnce(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	tg, llm := fakes(t)
	brain := &teamBrain{}
	llm.Handle(brain.reply)
	base := externalEnv(t, tg, llm, "")
	cfg := `agents:
  - name: lead
    model: lead-model
  - name: dev
    description: collects changes
    model: dev-model
  - name: qa
    description: runs tests
    model: qa-model
bindings:
  - chat: "telegram:7171"
    agent: lead
teams:
  - name: release
    lead: lead
    members: [dev, qa]
`
	startReplica(ctx, t, base, cfg)
	const chat = 7171
	after := lastID(tg, chat)
	tg.SendText(chat, chat, "Hal", "prepare the release notes")
	answer := newReplyContaining(ctx, t, tg, chat, after, "Release notes ready.")
	for _, want := range []string{"teammate: dev completed task #", "dev finished it", "teammate: qa completed task #", "qa finished it"} {
		if !strings.Contains(answer.Visible, want) {
			t.Errorf("the lead's answer lacks %q:\n%s", want, answer.Visible)
		}
	}
	// Nothing else reaches the chat: not the silent turn, not a teammate,
	// not recovery taking a silent or a teammate's reply for undelivered.
	// Recovery passes run every second and take sessions idle for 3 s.
	time.Sleep(4 * time.Second)
	var replies []string
	for _, m := range tg.Messages(chat) {
		if m.ID > after && m.ID != answer.ID {
			replies = append(replies, m.Visible)
		}
	}
	if len(replies) > 0 {
		t.Errorf("the chat got more than the one answer: %q", replies)
	}
	after = lastID(tg, chat)
	// The tools of agents working together, by CONTRACT.md's names.
	brain.mu.Lock()
	offered := brain.leadTools
	brain.mu.Unlock()
	for _, name := range []string{"handoff", "team_tasks", "team_message", "spawn", "sessions_send"} {
		if !slices.Contains(offered, name) {
			t.Errorf("the lead was not offered %s: %v", name, offered)
		}
	}
	// The lead's silent turn ("wait") is skipped when the outcomes are in
	// its session before its next model call (steer mode); either way it
	// answers once.
	if got := strings.Join(brain.runs(), ","); got != "delegate,wait,answer" && got != "delegate,answer" {
		t.Errorf("lead turns = %v; want delegate, (wait,) answer", got)
	}

	tg.SendText(chat, chat, "Hal", "/tasks")
	newReplyContaining(ctx, t, tg, chat, after, "Team release (lead lead) has no open tasks.")

	// Mail: the lead asks dev, which is woken by the message, answers by
	// mail, which wakes the lead in the chat.
	after = lastID(tg, chat)
	tg.SendText(chat, chat, "Hal", "ask dev which version we ship")
	newReplyContaining(ctx, t, tg, chat, after, "dev says: dev ships v1.2")
	if got := strings.Join(brain.runs(), ","); !strings.HasSuffix(got, "answer,mail,wait,relay") && !strings.HasSuffix(got, "answer,mail,relay") {
		t.Errorf("lead turns = %v; want …, mail, (wait,) relay", got)
	}
}

// TestE2ESubagentResultReachesTheChat: through the binary, an agent spawns
// a subagent; the subagent (not offered spawn) works on its own session,
// and its result, announced to the parent, is answered in the chat.
func TestE2ESubagentResultReachesTheChat(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	tg, llm := fakes(t)
	var mu sync.Mutex
	var subTools []string
	llm.Handle(func(r llmtest.Request) llmtest.Reply {
		last := r.Messages[len(r.Messages)-1]
		switch {
		case last.Role == "user" && strings.HasPrefix(last.Content, "[Task from default"):
			mu.Lock()
			subTools = r.Tools
			mu.Unlock()
			return llmtest.Reply{Text: "the logs are quiet"}
		case last.Role == "user" && strings.HasPrefix(last.Content, "[Subagent"):
			return llmtest.Reply{Text: "parent heard: " + last.Content}
		case last.Role == "user":
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "spawn", Arguments: `{"action":"spawn","task":"read the logs","label":"logs"}`}}}
		}
		return llmtest.Reply{Text: "tool said: " + last.Content}
	})
	startReplica(ctx, t, externalEnv(t, tg, llm, ""), "")
	const chat = 7373
	after := lastID(tg, chat)
	tg.SendText(chat, chat, "Hal", "look at the logs in the background")
	// (The spawn's own answer may be skipped when the result is in first.)
	newReplyContaining(ctx, t, tg, chat, after, "parent heard: [Subagent logs (")
	mu.Lock()
	defer mu.Unlock()
	if len(subTools) == 0 || slices.Contains(subTools, "spawn") || slices.Contains(subTools, "sessions_send") {
		t.Errorf("the subagent was offered %v; want its tools without spawn and sessions_send", subTools)
	}
}
