package teams

import (
	"context"
	"fmt"
	"strings"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
)

// Commands returns the chat commands of the teams feature, to register
// with the Router (bot.Router.Register): /tasks on s.
func Commands(s *Service) []bot.Command {
	return []bot.Command{{
		Name: "tasks",
		Help: "the task board of this chat's agent's team",
		Run: func(ctx context.Context, _ bot.Host, in channels.Inbound, _ string) string {
			return s.tasksCommand(ctx, in)
		},
	}}
}

// tasksCommand lists the active tasks of the team of the chat's agent.
func (s *Service) tasksCommand(ctx context.Context, in channels.Inbound) string {
	if s.o.Board == nil || s.o.TeamOf == nil {
		return "There is no task board here."
	}
	agent := s.p.AgentAt(ctx, in.Address())
	team, lead, ok := s.o.TeamOf(agent)
	if !ok {
		return agent + " is not in a team, so there is no task board here (teams: in the config)."
	}
	tasks, err := s.o.Board.ListTasks(ctx, team, TaskFilter{})
	if err != nil {
		return "Could not read the task board right now (storage unavailable); try again later."
	}
	if len(tasks) == 0 {
		return fmt.Sprintf("Team %s (lead %s) has no open tasks.", team, lead)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Team %s (lead %s), open tasks:\n", team, lead)
	for _, t := range tasks {
		who := t.Owner
		if who == "" {
			who = t.Assignee
		}
		if who == "" {
			who = "unclaimed"
		}
		fmt.Fprintf(&b, "- #%d [%s] %s — %s, %d%%\n", t.ID, t.Status, t.Subject, who, t.Progress)
	}
	return b.String()
}
