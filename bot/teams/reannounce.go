package teams

import (
	"context"
	"fmt"
	"time"
)

// reannounceAfter is by default how long a task may stay pending and unchanged before
// its announcement is repeated. A task is announced when the step of the
// model that created it ends (tools.AtStepEnd); a crash before that leaves
// it on the board with nobody told. The wait is long enough that a step
// still running (a long command after the create) is rarely overtaken.
const reannounceAfter = 5 * time.Minute

// Reannounce repeats, once per task in this process, the announcement of
// team's tasks that have been pending and unchanged for
// Options.ReannounceAfter, and returns how many it repeated. The hand-over
// is idempotent (the message's id), so a teammate that was told already is
// only woken again, and its run finds nothing new. RunMail calls it on
// every pass.
func (s *Service) Reannounce(ctx context.Context, team string) (int, error) {
	if s.o.Board == nil {
		return 0, nil
	}
	tasks, err := s.o.Board.ListTasks(ctx, team, TaskFilter{Status: "active", Limit: 200})
	if err != nil {
		return 0, fmt.Errorf("list the pending tasks of team %s: %w", team, err)
	}
	n := 0
	for _, t := range tasks {
		if t.Status != TaskPending || time.Since(t.UpdatedAt) < s.o.ReannounceAfter {
			continue
		}
		if _, done := s.reannounced.LoadOrStore(fmt.Sprintf("%s#%d", team, t.ID), true); done {
			continue
		}
		s.log.Info("task pending and unclaimed; announcing it again", "team", team, "task", t.ID, "pending_since", t.UpdatedAt)
		s.TaskEvent(ctx, TaskEvent{Kind: TaskEventReady, Team: team, Task: t, By: t.CreatedBy})
		n++
	}
	return n, nil
}
