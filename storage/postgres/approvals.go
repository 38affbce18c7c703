package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/bot/approvals"
)

var _ approvals.Store = (*DB)(nil)

// maxPendingApprovals bounds one PendingApprovals call.
const maxPendingApprovals = 200

// approvalCols are the columns scanApproval reads, in order.
var approvalCols = `id, tool, command, cwd, pattern, agent, coalesce(session_key, ''),
	coalesce(tool_call_id, ''), requester, platform, chat_id, thread_id, status, decided_by,
	created_at, expires_at, decided_at, warnings, quorum, approvers, self_approve, escalate_at,
	escalate_to, escalated_at, verb, ` + votesCol

// CreateApproval stores a as pending (a.Status is ignored) and audits the
// request. ID and ExpiresAt must be set; a zero CreatedAt means now. When an
// approval for the same (Session, ToolCallID) exists, nothing is stored and
// that approval is returned with created=false, unless it is for another
// tool, command or directory: then CreateApproval fails rather than hand out
// a decision about a different command. An approval with an empty Session or
// ToolCallID is never merged with another.
func (db *DB) CreateApproval(ctx context.Context, a approvals.Approval) (approvals.Approval, bool, error) {
	switch {
	case a.ID == "":
		return approvals.Approval{}, false, errors.New("create approval: empty id; set a random unguessable id")
	case a.Tool == "":
		return approvals.Approval{}, false, fmt.Errorf("create approval %s: empty tool name", a.ID)
	case a.ExpiresAt.IsZero():
		return approvals.Approval{}, false, fmt.Errorf("create approval %s: no expiry time; set ExpiresAt", a.ID)
	}
	var createdAt *time.Time
	if !a.CreatedAt.IsZero() {
		createdAt = &a.CreatedAt
	}
	session, callID := nullIfEmpty(storable(a.Session)), nullIfEmpty(storable(a.ToolCallID))
	quorum := max(a.Quorum, 1)
	var escalateAt *time.Time
	if !a.EscalateAt.IsZero() {
		escalateAt = &a.EscalateAt
	}
	var (
		stored  approvals.Approval
		created bool
	)
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var err error
		stored, err = scanApproval(tx.QueryRow(ctx, `INSERT INTO approvals
				(id, tool, command, cwd, pattern, agent, session_key, tool_call_id, requester,
				 platform, chat_id, thread_id, created_at, expires_at, warnings,
				 quorum, approvers, self_approve, escalate_at, escalate_to, verb)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, coalesce($13::timestamptz, now()), $14, $15,
				$16, $17, $18, $19, $20, $21)
			ON CONFLICT (session_key, tool_call_id) WHERE consumed_at IS NULL DO NOTHING
			RETURNING `+approvalCols,
			storable(a.ID), storable(a.Tool), storable(a.Command), storable(a.Cwd), storable(a.Pattern),
			storable(a.Agent), session, callID, storable(a.Requester), storable(a.Chat.Platform),
			storable(a.Chat.ChatID), storable(a.Chat.ThreadID), createdAt, a.ExpiresAt, storableList(a.Warnings),
			quorum, storableList(a.Approvers), a.SelfApprove, escalateAt, storableList(a.EscalateTo), storable(a.Verb)))
		if errors.Is(err, pgx.ErrNoRows) {
			// An approval for (session, tool call) exists; the conflicting
			// insert has committed by now, so a fresh statement sees it.
			stored, err = scanApproval(tx.QueryRow(ctx, `SELECT `+approvalCols+` FROM approvals
				WHERE session_key = $1 AND tool_call_id = $2 AND consumed_at IS NULL`, session, callID))
			if err != nil {
				return err
			}
			if stored.Tool != storable(a.Tool) || stored.Command != storable(a.Command) || stored.Cwd != storable(a.Cwd) {
				return fmt.Errorf("tool call %s of session %s already has approval %s for a different command; the model reused a tool call id, ask it to call the tool again",
					a.ToolCallID, a.Session, stored.ID)
			}
			return nil
		}
		if err != nil {
			return err
		}
		created = true
		return writeAudit(ctx, tx, AuditEntry{
			Actor: a.Requester, Action: ActionApprovalRequested,
			SubjectKind: approvals.Kind, SubjectID: stored.ID,
			Detail: map[string]any{"tool": stored.Tool, "agent": stored.Agent, "session": stored.Session, "quorum": stored.Quorum},
		})
	})
	if err != nil {
		return approvals.Approval{}, false, fmt.Errorf("create approval %s: %w", a.ID, err)
	}
	return stored, created, nil
}

// GetApproval returns approval id, or an error wrapping bot.ErrNotFound.
// Transient errors are retried.
func (db *DB) GetApproval(ctx context.Context, id string) (approvals.Approval, error) {
	return retryValue(ctx, func(ctx context.Context) (approvals.Approval, error) { return db.getApproval(ctx, id) })
}

// getApproval is GetApproval without retries.
func (db *DB) getApproval(ctx context.Context, id string) (approvals.Approval, error) {
	return getByID(ctx, db, "approval", `SELECT `+approvalCols+` FROM approvals WHERE id = $1`, id, scanApproval)
}

// DecideApproval moves pending approval id to status (allowed_once,
// allowed_always, denied or expired), decided by `by`, in one statement and
// one transaction with its audit record, so of concurrent decisions exactly
// one wins. It returns the approval as it is afterwards and whether this call
// decided it. A decision other than expiry loses once ExpiresAt has passed:
// the approval is returned still pending with false, for the caller to
// expire. An unknown id gives an error wrapping bot.ErrNotFound.
func (db *DB) DecideApproval(ctx context.Context, id, status, by string) (approvals.Approval, bool, error) {
	switch status {
	case approvals.StatusAllowedOnce, approvals.StatusAllowedAlways, approvals.StatusDenied, approvals.StatusExpired, approvals.StatusCancelled:
	default:
		return approvals.Approval{}, false, fmt.Errorf("decide approval %s: %q is not a decision; use allowed_once, allowed_always, denied, expired or cancelled", id, status)
	}
	if by == "" {
		return approvals.Approval{}, false, fmt.Errorf("decide approval %s: say who decided", id)
	}
	a, decided, err := decideOnce(ctx, db,
		func(tx pgx.Tx) (approvals.Approval, error) {
			return scanApproval(tx.QueryRow(ctx, `UPDATE approvals
				SET status = $2, decided_by = $3, decided_at = now()
				WHERE id = $1 AND status = 'pending' AND ($2::text IN ('expired', 'cancelled') OR expires_at > now())
				RETURNING `+approvalCols, id, status, storable(by)))
		},
		func(tx pgx.Tx, _ approvals.Approval) error {
			return writeAudit(ctx, tx, AuditEntry{
				Actor: by, Action: ActionApprovalDecided,
				SubjectKind: approvals.Kind, SubjectID: id,
				Detail: map[string]any{"status": status},
			})
		},
		func(ctx context.Context) (approvals.Approval, error) { return db.getApproval(ctx, id) })
	if err != nil {
		return approvals.Approval{}, false, fmt.Errorf("decide approval %s: %w", id, err)
	}
	return a, decided, nil
}

// PendingApprovals lists pending approvals, oldest first, at most 200.
func (db *DB) PendingApprovals(ctx context.Context) ([]approvals.Approval, error) {
	return db.listApprovals(ctx, "list pending approvals", `status = 'pending'`)
}

// PendingApprovalsOf lists the pending approvals of session, oldest first.
func (db *DB) PendingApprovalsOf(ctx context.Context, session string) ([]approvals.Approval, error) {
	return db.listApprovals(ctx, "list pending approvals of "+session, `status = 'pending' AND session_key = $2`, session)
}

// DueApprovals lists pending approvals whose expiry time has passed, oldest
// first, at most 200, and returns when to look again: when the next
// pending approval expires (zero when none is pending), or a time already
// past when more are due than were listed. One round trip; both queries
// see the same now().
func (db *DB) DueApprovals(ctx context.Context) ([]approvals.Approval, time.Time, error) {
	list, next, err := listDue(ctx, db, `SELECT `+approvalCols+` FROM approvals
			WHERE status = 'pending' AND expires_at <= now() ORDER BY created_at, id LIMIT $1`,
		`SELECT min(expires_at) FROM approvals WHERE status = 'pending' AND expires_at > now()`,
		maxPendingApprovals, collectApprovals, func(a approvals.Approval) time.Time { return a.ExpiresAt })
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("list due approvals: %w", err)
	}
	return list, next, nil
}

// listDue runs listSQL (the due requests, at most limit, $1) and nextSQL
// (the earliest expiry still ahead, or NULL) in one round trip, so both
// see the same now(). When the list is full, more may be due: next is then
// the last listed expiry, a time already past, so the caller looks again
// at once.
func listDue[T any](ctx context.Context, db *DB, listSQL, nextSQL string, limit int,
	collect func(pgx.Rows) ([]T, error), expiresAt func(T) time.Time) ([]T, time.Time, error) {
	type due struct {
		list []T
		next time.Time
	}
	d, err := retryValue(ctx, func(ctx context.Context) (due, error) {
		var d due
		b := &pgx.Batch{}
		b.Queue(listSQL, limit).Query(func(rows pgx.Rows) error {
			var err error
			d.list, err = collect(rows)
			return err
		})
		b.Queue(nextSQL).QueryRow(func(row pgx.Row) error {
			var next *time.Time
			if err := row.Scan(&next); err != nil {
				return err
			}
			if next != nil {
				d.next = *next
			}
			return nil
		})
		return d, db.pool.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return nil, time.Time{}, err
	}
	if len(d.list) == limit {
		d.next = expiresAt(d.list[len(d.list)-1])
	}
	return d.list, d.next, nil
}

// listApprovals returns at most maxPendingApprovals approvals matching
// where (whose parameters start at $2), oldest first.
func (db *DB) listApprovals(ctx context.Context, what, where string, args ...any) ([]approvals.Approval, error) {
	list, err := retryValue(ctx, func(ctx context.Context) ([]approvals.Approval, error) {
		rows, err := db.pool.Query(ctx, `SELECT `+approvalCols+` FROM approvals
			WHERE `+where+` ORDER BY created_at, id LIMIT $1`, append([]any{maxPendingApprovals}, args...)...)
		if err != nil {
			return nil, err
		}
		return collectApprovals(rows)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return list, nil
}

// ConsumeApproval marks the allowed-once approval id as used, with its
// audit record, and reports whether this call did (false: used before, or
// not allowed once).
func (db *DB) ConsumeApproval(ctx context.Context, id string) (bool, error) {
	used, err := retryValue(ctx, func(ctx context.Context) (bool, error) {
		used := false
		err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
			var requester string
			err := tx.QueryRow(ctx, `UPDATE approvals SET consumed_at = now()
				WHERE id = $1 AND status = 'allowed_once' AND consumed_at IS NULL
				RETURNING requester`, id).Scan(&requester)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			if err != nil {
				return err
			}
			used = true
			return writeAudit(ctx, tx, AuditEntry{Actor: requester, Action: ActionApprovalUsed,
				SubjectKind: approvals.Kind, SubjectID: id})
		})
		return used, err
	})
	if err != nil {
		return false, fmt.Errorf("use approval %s: %w", id, err)
	}
	return used, nil
}

// AllowAlways records, with its audit record, that pattern may always run
// for tool. Allowing a pattern again keeps the first record (who and when)
// and audits the repeat.
func (db *DB) AllowAlways(ctx context.Context, tool, pattern, by string) error {
	if tool == "" || pattern == "" {
		return fmt.Errorf("allow always: tool %q and pattern must not be empty", tool)
	}
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO allow_always (tool, pattern, created_by) VALUES ($1, $2, $3)
			ON CONFLICT (tool, pattern) DO NOTHING`, storable(tool), storable(pattern), storable(by)); err != nil {
			return err
		}
		return writeAudit(ctx, tx, AuditEntry{
			Actor: by, Action: ActionApprovalAllowAlways,
			SubjectKind: SubjectAllowAlways, SubjectID: tool,
			Detail: map[string]any{"pattern": pattern},
		})
	})
	if err != nil {
		return fmt.Errorf("allow always for %s: %w", tool, err)
	}
	return nil
}

// IsAlwaysAllowed reports whether exactly pattern was always-allowed for
// tool; there is no prefix or wildcard matching.
func (db *DB) IsAlwaysAllowed(ctx context.Context, tool, pattern string) (bool, error) {
	if tool == "" || pattern == "" {
		return false, nil
	}
	var ok bool
	err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM allow_always WHERE tool = $1 AND pattern = $2)`,
		storable(tool), storable(pattern)).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("check allow-always for %s: %w", tool, err)
	}
	return ok, nil
}

// collectApprovals reads every row of approvalCols.
func collectApprovals(rows pgx.Rows) ([]approvals.Approval, error) {
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (approvals.Approval, error) { return scanApproval(row) })
}

// scanApproval reads one row of approvalCols.
func scanApproval(row pgx.Row) (approvals.Approval, error) {
	var (
		a                                  approvals.Approval
		decidedAt, escalateAt, escalatedAt *time.Time
		votes                              []byte
	)
	err := row.Scan(&a.ID, &a.Tool, &a.Command, &a.Cwd, &a.Pattern, &a.Agent, &a.Session, &a.ToolCallID,
		&a.Requester, &a.Chat.Platform, &a.Chat.ChatID, &a.Chat.ThreadID, &a.Status, &a.DecidedBy,
		&a.CreatedAt, &a.ExpiresAt, &decidedAt, &a.Warnings, &a.Quorum, &a.Approvers, &a.SelfApprove,
		&escalateAt, &a.EscalateTo, &escalatedAt, &a.Verb, &votes)
	if err != nil {
		return a, err
	}
	for t, at := range map[*time.Time]*time.Time{&a.DecidedAt: decidedAt, &a.EscalateAt: escalateAt, &a.EscalatedAt: escalatedAt} {
		if at != nil {
			*t = *at
		}
	}
	a.Warnings, a.Approvers, a.EscalateTo = nilIfEmpty(a.Warnings), nilIfEmpty(a.Approvers), nilIfEmpty(a.EscalateTo)
	a.Votes, err = decodeVotes(votes)
	return a, err
}
