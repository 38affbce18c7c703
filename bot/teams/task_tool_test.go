package teams_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-chat/switchboard/bot/teams"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
	"github.com/switchboard-chat/switchboard/tools"
)

func TestTeamTasksTool(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	var mu sync.Mutex
	var told []string
	tool := teams.NewTaskTool(teams.TaskToolOptions{
		Board: db,
		TeamOf: func(agent string) (string, string, bool) {
			switch agent {
			case "lead", "m1", "m2":
				return "incident", "lead", true
			}
			return "", "", false
		},
		Events: func(_ context.Context, ev teams.TaskEvent) {
			mu.Lock()
			defer mu.Unlock()
			told = append(told, fmt.Sprintf("%s %s #%d origin=%s by %s %s", ev.Team, ev.Kind, ev.Task.ID, ev.Task.Origin, ev.By, ev.Text))
		},
	})
	as := func(agent, args string) tools.Result {
		c := tools.Call{Agent: agent, Session: agent + "/telegram:1", Channel: "telegram", ChatID: "1"}
		return tool.Execute(tools.WithCall(ctx, c), json.RawMessage(args))
	}
	check := func(r tools.Result, wantErr bool, want string) {
		t.Helper()
		if r.IsError != wantErr || !strings.Contains(r.ForLLM, want) {
			t.Fatalf("got %+v; want error=%v containing %q", r, wantErr, want)
		}
	}
	check(as("outsider", `{"action":"list"}`), true, "not in a team")
	check(as("lead", `{"action":"create","subject":"collect logs","priority":2}`), false, "created #")
	first := firstID(t, as("lead", `{"action":"list"}`).ForLLM)
	check(as("lead", `{"action":"create","subject":"write the postmortem","assignee":"m2","blocked_by":[`+first+`]}`), false, "[blocked]")
	check(as("m1", `{"action":"claim","task_id":`+first+`}`), false, "you claimed #"+first)
	check(as("m2", `{"action":"claim","task_id":`+first+`}`), true, "not open for claiming")
	check(as("m2", `{"action":"complete","task_id":`+first+`,"result":"x"}`), true, "only the agent that claimed")
	check(as("m1", `{"action":"progress","task_id":`+first+`,"percent":60,"text":"most nodes done"}`), false, "progress 60%")
	check(as("m1", `{"action":"complete","task_id":`+first+`,"result":"logs in the bucket"}`), false, "unblocked #")
	second := firstID(t, as("m2", `{"action":"list"}`).ForLLM)
	want := []string{
		"incident ready #" + first + " origin=telegram:1 by lead ",
		"incident ready #" + second + " origin=telegram:1 by m1 ",
		"incident closed #" + first + " origin=telegram:1 by m1 ",
	}
	if !slices.Equal(told, want) {
		t.Fatalf("events = %q; want %q (the blocked task is ready only when unblocked)", told, want)
	}
	check(as("m2", `{"action":"claim","task_id":`+second+`}`), false, "claimed by m2")
	check(as("m2", `{"action":"comment","task_id":`+second+`,"type":"blocker","text":"no access to the wiki"}`), false, "the lead (lead) is told")
	if len(told) != 4 || told[3] != "incident blocker #"+second+" origin=telegram:1 by m2 no access to the wiki" {
		t.Fatalf("events = %q; want the blocker last", told)
	}
	check(as("lead", `{"action":"get","task_id":`+second+`}`), false, "[blocker] m2: no access to the wiki")
	check(as("lead", `{"action":"search","query":"postmortem"}`), false, "write the postmortem")
	check(as("lead", `{"action":"list","status":"all","order":"newest"}`), false, "[failed] write the postmortem")
	check(as("lead", `{"action":"get","task_id":424242}`), true, "no such task")
	check(as("lead", `{"action":"claim"}`), true, `pass "task_id"`)
	check(as("lead", `{"action":"fly"}`), true, "unknown action")
}

// firstID returns the id of the first task line in a list.
func firstID(t *testing.T, list string) string {
	t.Helper()
	i := strings.Index(list, "#")
	if i < 0 {
		t.Fatalf("no task in %q", list)
	}
	j := i + 1
	for j < len(list) && list[j] >= '0' && list[j] <= '9' {
		j++
	}
	return list[i+1 : j]
}

// TestTeamTasksAnnouncesAStepsTasksTogether: tasks created in one step of
// the model are announced when the step ends, so a teammate woken for the
// first cannot finish it before the second exists.
func TestTeamTasksAnnouncesAStepsTasksTogether(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	var told []string
	tool := teams.NewTaskTool(teams.TaskToolOptions{
		Board:  db,
		TeamOf: func(string) (string, string, bool) { return "release", "lead", true },
		Events: func(_ context.Context, ev teams.TaskEvent) {
			told = append(told, fmt.Sprintf("%s #%d", ev.Kind, ev.Task.ID))
		},
	})
	step, end := tools.WithStepEnd(tools.WithCall(ctx, tools.Call{Agent: "lead", Session: "lead/telegram:1"}))
	for _, subject := range []string{"collect the changes", "run the tests"} {
		if r := tool.Execute(step, json.RawMessage(`{"action":"create","subject":"`+subject+`","assignee":"m1"}`)); r.IsError {
			t.Fatal(r.ForLLM)
		}
	}
	if len(told) != 0 {
		t.Fatalf("announced before the step ended: %q", told)
	}
	end(ctx)
	if len(told) != 2 || !strings.HasPrefix(told[0], "ready #") || !strings.HasPrefix(told[1], "ready #") || told[0] == told[1] {
		t.Fatalf("after the step: %q, want both tasks ready", told)
	}
}
