package teams_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/bot/teams"
	"github.com/switchboard-chat/switchboard/storage/redis"
	"github.com/switchboard-chat/switchboard/storage/redis/redistest"
	"github.com/switchboard-chat/switchboard/tools"
)

func TestTeamMessageTool(t *testing.T) {
	ctx := context.Background()
	rdb, err := redis.Open(ctx, redistest.URL(t), redis.Options{Prefix: redistest.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	var woken []string
	tool := teams.NewMessageTool(teams.MessageToolOptions{
		Mailbox: rdb,
		TeamOf: func(agent string) (string, string, bool) {
			return "crew", "lead", agent == "lead" || agent == "m1" || agent == "m2"
		},
		Members:  func(string) []string { return []string{"lead", "m1", "m2"} },
		Activate: func(_ context.Context, _, agent string) { woken = append(woken, agent) },
	})
	n := 0
	as := func(agent, args string) tools.Result {
		n++
		c := tools.Call{Agent: agent, Session: agent + "/team:crew", ToolCallID: "call-" + string(rune('a'+n))}
		return tool.Execute(tools.WithCall(ctx, c), json.RawMessage(args))
	}
	check := func(r tools.Result, wantErr bool, want string) {
		t.Helper()
		if r.IsError != wantErr || !strings.Contains(r.ForLLM, want) {
			t.Fatalf("got %+v; want error=%v containing %q", r, wantErr, want)
		}
	}
	check(as("stranger", `{"action":"read"}`), true, "not in a team")
	check(as("lead", `{"action":"send","to":"m1","text":"take the logs task"}`), false, "sent to m1")
	check(as("lead", `{"action":"send","to":"nobody","text":"x"}`), true, "not a teammate")
	check(as("m1", `{"action":"broadcast","text":"logs are in the bucket"}`), false, "sent to lead, m2")
	check(as("m1", `{"action":"read"}`), false, "[Team message from lead] take the logs task")
	check(as("m1", `{"action":"read"}`), false, "no unread team messages")
	check(as("m2", `{"action":"read"}`), false, "[Team message from m1] logs are in the bucket")
	check(as("lead", `{"action":"read"}`), false, "[Team message from m1] logs are in the bucket")
	if strings.Join(woken, ",") != "m1,lead,m2" {
		t.Errorf("woken = %v; want every recipient activated", woken)
	}
}
