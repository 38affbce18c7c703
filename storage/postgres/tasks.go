package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/bot/teams"
)

var _ teams.TaskBoard = (*DB)(nil)

const taskCols = `id, team, subject, description, priority, status, blocked_by, assignee, owner, created_by,
	result, progress, progress_note, origin, created_at, updated_at`

func scanTask(row pgx.Row) (teams.Task, error) {
	var t teams.Task
	err := row.Scan(&t.ID, &t.Team, &t.Subject, &t.Description, &t.Priority, &t.Status, &t.BlockedBy, &t.Assignee,
		&t.Owner, &t.CreatedBy, &t.Result, &t.Progress, &t.ProgressNote, &t.Origin, &t.CreatedAt, &t.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return t, teams.ErrNoTask
	}
	return t, err
}

// auditTask records one task change in the audit log, in tx.
func auditTask(ctx context.Context, tx pgx.Tx, actor, action string, t teams.Task, detail map[string]any) error {
	if detail == nil {
		detail = map[string]any{}
	}
	detail["team"], detail["status"] = t.Team, t.Status
	return writeAudit(ctx, tx, AuditEntry{Actor: actor, Action: "task." + action, SubjectKind: "task",
		SubjectID: strconv.FormatInt(t.ID, 10), Detail: detail})
}

// CreateTask implements teams.TaskBoard. A task blocked by tasks that are
// not all completed starts blocked; blockers must be tasks of the team.
func (db *DB) CreateTask(ctx context.Context, t teams.Task) (teams.Task, error) {
	if t.BlockedBy == nil {
		t.BlockedBy = []int64{}
	}
	var out teams.Task
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var found, open int
		if err := tx.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE status <> 'completed')
			FROM team_tasks WHERE team = $1 AND id = ANY($2)`, storable(t.Team), t.BlockedBy).Scan(&found, &open); err != nil {
			return err
		}
		if found != len(t.BlockedBy) {
			return fmt.Errorf("blocked_by names a task that is not on this team's board")
		}
		status := teams.TaskPending
		if open > 0 {
			status = teams.TaskBlocked
		}
		var err error
		out, err = scanTask(tx.QueryRow(ctx, `INSERT INTO team_tasks
				(team, subject, description, priority, status, blocked_by, assignee, created_by, origin)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING `+taskCols,
			storable(t.Team), storable(t.Subject), storable(t.Description), t.Priority, status, t.BlockedBy,
			storable(t.Assignee), storable(t.CreatedBy), storable(t.Origin)))
		if err != nil {
			return err
		}
		return auditTask(ctx, tx, t.CreatedBy, "created", out, map[string]any{"subject": out.Subject})
	})
	if err != nil {
		return teams.Task{}, fmt.Errorf("create task: %w", err)
	}
	return out, nil
}

// GetTask implements teams.TaskBoard.
func (db *DB) GetTask(ctx context.Context, team string, id int64) (teams.Task, []teams.TaskComment, error) {
	t, err := scanTask(db.pool.QueryRow(ctx, `SELECT `+taskCols+` FROM team_tasks WHERE team = $1 AND id = $2`, storable(team), id))
	if err != nil {
		return t, nil, err
	}
	rows, err := db.pool.Query(ctx, `SELECT author, kind, text, created_at FROM team_task_comments
		WHERE task_id = $1 ORDER BY id LIMIT 100`, id)
	if err != nil {
		return t, nil, fmt.Errorf("task comments: %w", err)
	}
	comments, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (teams.TaskComment, error) {
		var c teams.TaskComment
		return c, r.Scan(&c.Author, &c.Kind, &c.Text, &c.At)
	})
	return t, comments, err
}

// ListTasks implements teams.TaskBoard.
func (db *DB) ListTasks(ctx context.Context, team string, f teams.TaskFilter) ([]teams.Task, error) {
	where := `status NOT IN ('completed', 'cancelled', 'failed')`
	switch f.Status {
	case "completed":
		where = `status = 'completed'`
	case "all":
		where = `true`
	}
	order := `priority DESC, created_at`
	if f.Order == "newest" {
		order = `created_at DESC`
	}
	if f.Limit <= 0 || f.Limit > 200 {
		f.Limit = 50
	}
	rows, err := db.pool.Query(ctx, `SELECT `+taskCols+` FROM team_tasks WHERE team = $1 AND `+where+
		` ORDER BY `+order+`, id LIMIT $2`, storable(team), f.Limit)
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (teams.Task, error) { return scanTask(r) })
}

// change runs one conditional UPDATE of a task and audits it; a task that
// exists but does not meet the condition gets errIfNot.
func (db *DB) change(ctx context.Context, team string, id int64, actor, action, set, cond string, errIfNot error,
	detail map[string]any, args ...any) (teams.Task, error) {
	var out teams.Task
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		params := append([]any{storable(team), id}, args...)
		var err error
		out, err = scanTask(tx.QueryRow(ctx, `UPDATE team_tasks SET `+set+`, updated_at = now()
			WHERE team = $1 AND id = $2 AND `+cond+` RETURNING `+taskCols, params...))
		if errors.Is(err, teams.ErrNoTask) {
			var exists bool
			if qerr := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM team_tasks WHERE team = $1 AND id = $2)`,
				storable(team), id).Scan(&exists); qerr != nil {
				return qerr
			}
			if exists {
				return errIfNot
			}
			return teams.ErrNoTask
		}
		if err != nil {
			return err
		}
		return auditTask(ctx, tx, actor, action, out, detail)
	})
	if err != nil {
		if errors.Is(err, teams.ErrNoTask) || errors.Is(err, errIfNot) {
			return teams.Task{}, err
		}
		return teams.Task{}, fmt.Errorf("%s task %d: %w", action, id, err)
	}
	return out, nil
}

// ClaimTask implements teams.TaskBoard: one conditional UPDATE, so
// exactly one of concurrent claimers wins.
func (db *DB) ClaimTask(ctx context.Context, team string, id int64, agent string) (teams.Task, error) {
	return db.change(ctx, team, id, agent, "claimed", `status = 'in_progress', owner = $3`,
		`status = 'pending' AND (assignee = '' OR assignee = $3)`, teams.ErrTaskTaken, nil, storable(agent))
}

// CompleteTask implements teams.TaskBoard.
func (db *DB) CompleteTask(ctx context.Context, team string, id int64, agent, result string) (teams.Task, []teams.Task, error) {
	var done teams.Task
	var unblocked []teams.Task
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var err error
		done, err = scanTask(tx.QueryRow(ctx, `UPDATE team_tasks SET status = 'completed', result = $4, progress = 100,
			updated_at = now() WHERE team = $1 AND id = $2 AND status = 'in_progress' AND owner = $3 RETURNING `+taskCols,
			storable(team), id, storable(agent), storable(result)))
		if errors.Is(err, teams.ErrNoTask) {
			return teams.ErrNotOwner
		}
		if err != nil {
			return err
		}
		if err := auditTask(ctx, tx, agent, "completed", done, nil); err != nil {
			return err
		}
		// Dependants whose every blocker is now completed become pending.
		rows, err := tx.Query(ctx, `UPDATE team_tasks d SET status = 'pending', updated_at = now()
			WHERE d.team = $1 AND d.status = 'blocked' AND $2 = ANY(d.blocked_by)
			  AND NOT EXISTS (SELECT 1 FROM team_tasks b WHERE b.id = ANY(d.blocked_by) AND b.status <> 'completed')
			RETURNING `+taskCols, storable(team), id)
		if err != nil {
			return err
		}
		if unblocked, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (teams.Task, error) { return scanTask(r) }); err != nil {
			return err
		}
		for _, u := range unblocked {
			if err := auditTask(ctx, tx, "system", "unblocked", u, map[string]any{"by_task": id}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, teams.ErrNotOwner) {
			if _, _, gerr := db.GetTask(ctx, team, id); errors.Is(gerr, teams.ErrNoTask) {
				return teams.Task{}, nil, teams.ErrNoTask
			}
			return teams.Task{}, nil, err
		}
		return teams.Task{}, nil, fmt.Errorf("complete task %d: %w", id, err)
	}
	return done, unblocked, nil
}

// CancelTask implements teams.TaskBoard.
func (db *DB) CancelTask(ctx context.Context, team string, id int64, by string) (teams.Task, error) {
	return db.change(ctx, team, id, by, "cancelled", `status = 'cancelled'`,
		`status NOT IN ('completed', 'cancelled', 'failed')`, teams.ErrTaskClosed, nil)
}

// CommentTask implements teams.TaskBoard: a blocker fails the task.
func (db *DB) CommentTask(ctx context.Context, team string, id int64, by, kind, text string) (teams.Task, error) {
	var out teams.Task
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var err error
		if kind == "blocker" {
			out, err = scanTask(tx.QueryRow(ctx, `UPDATE team_tasks SET status = 'failed', updated_at = now()
				WHERE team = $1 AND id = $2 AND status NOT IN ('completed', 'cancelled', 'failed') RETURNING `+taskCols,
				storable(team), id))
			if errors.Is(err, teams.ErrNoTask) {
				return teams.ErrTaskClosed
			}
		} else {
			out, err = scanTask(tx.QueryRow(ctx, `SELECT `+taskCols+` FROM team_tasks WHERE team = $1 AND id = $2`, storable(team), id))
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO team_task_comments (task_id, author, kind, text) VALUES ($1, $2, $3, $4)`,
			id, storable(by), kind, storable(text)); err != nil {
			return err
		}
		return auditTask(ctx, tx, by, "comment."+kind, out, nil)
	})
	if err != nil {
		if errors.Is(err, teams.ErrTaskClosed) {
			if _, _, gerr := db.GetTask(ctx, team, id); errors.Is(gerr, teams.ErrNoTask) {
				return teams.Task{}, teams.ErrNoTask
			}
			return teams.Task{}, err
		}
		if errors.Is(err, teams.ErrNoTask) {
			return teams.Task{}, err
		}
		return teams.Task{}, fmt.Errorf("comment on task %d: %w", id, err)
	}
	return out, nil
}

// ProgressTask implements teams.TaskBoard.
func (db *DB) ProgressTask(ctx context.Context, team string, id int64, agent string, percent int, note string) (teams.Task, error) {
	return db.change(ctx, team, id, agent, "progress", `progress = $4, progress_note = $5`,
		`status = 'in_progress' AND owner = $3`, teams.ErrNotOwner, map[string]any{"percent": percent},
		storable(agent), min(max(percent, 0), 100), storable(note))
}

// SearchTasks implements teams.TaskBoard with full-text search over subject
// and description.
func (db *DB) SearchTasks(ctx context.Context, team, query string, limit int) ([]teams.Task, error) {
	if limit <= 0 || limit > 50 {
		limit = 20
	}
	rows, err := db.pool.Query(ctx, `SELECT `+taskCols+` FROM team_tasks, websearch_to_tsquery('english', $2) q
		WHERE team = $1 AND tsv @@ q ORDER BY ts_rank(tsv, q) DESC, id DESC LIMIT $3`, storable(team), storable(query), limit)
	if err != nil {
		return nil, fmt.Errorf("search tasks: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (teams.Task, error) { return scanTask(r) })
}
