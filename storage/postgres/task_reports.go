package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/bot/teams"
)

// UnreportedOutcomes returns, when no task of team created for origin is
// still open, the closed tasks (completed, cancelled, failed) whose outcome
// the lead has not heard yet; while any is open it returns none.
func (db *DB) UnreportedOutcomes(ctx context.Context, team, origin string) ([]teams.Task, error) {
	out, err := retryValue(ctx, func(ctx context.Context) ([]teams.Task, error) {
		rows, err := db.pool.Query(ctx, `SELECT `+taskCols+` FROM team_tasks t
			WHERE team = $1 AND origin = $2 AND NOT reported
			  AND status IN ('completed', 'cancelled', 'failed')
			  AND NOT EXISTS (SELECT 1 FROM team_tasks o WHERE o.team = $1 AND o.origin = $2
			                  AND o.status IN ('pending', 'blocked', 'in_progress'))
			ORDER BY id`, storable(team), storable(origin))
		if err != nil {
			return nil, err
		}
		return pgx.CollectRows(rows, func(row pgx.CollectableRow) (teams.Task, error) { return scanTask(row) })
	})
	if err != nil {
		return nil, fmt.Errorf("task outcomes of %s: %w", origin, err)
	}
	return out, nil
}

// MarkReported records that the lead heard the outcome of tasks ids.
func (db *DB) MarkReported(ctx context.Context, team string, ids []int64) error {
	err := withRetry(ctx, func(ctx context.Context) error {
		_, err := db.pool.Exec(ctx, `UPDATE team_tasks SET reported = true WHERE team = $1 AND id = ANY($2)`, storable(team), ids)
		return err
	})
	if err != nil {
		return fmt.Errorf("mark task outcomes reported: %w", err)
	}
	return nil
}
