package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/bot/console"
)

var _ console.Store = (*DB)(nil)

// SubjectConsoleSession is a console session; its SubjectID is the admin.
const SubjectConsoleSession = "console_session"

// CreateLoginLink implements console.Store. Links expired for a day are
// removed on the way: they can never be used again.
func (db *DB) CreateLoginLink(ctx context.Context, hash []byte, identity string, ttl time.Duration) error {
	return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM console_login_links WHERE expires_at < now() - interval '1 day'`); err != nil {
			return fmt.Errorf("prune login links: %w", err)
		}
		_, err := tx.Exec(ctx, `INSERT INTO console_login_links (token_hash, identity, expires_at)
			VALUES ($1, $2, now() + $3::float8 * interval '1 microsecond')`, hash, storable(identity), float64(ttl.Microseconds()))
		if err != nil {
			return fmt.Errorf("store login link: %w", err)
		}
		return nil
	})
}

// UseLoginLink implements console.Store: one UPDATE that only an unused,
// unexpired link passes, so two replicas opening the same link at once
// cannot both succeed.
func (db *DB) UseLoginLink(ctx context.Context, hash []byte) (string, error) {
	var identity string
	err := db.pool.QueryRow(ctx, `UPDATE console_login_links SET used_at = now()
		WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()
		RETURNING identity`, hash).Scan(&identity)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", console.ErrInvalidLink
	}
	if err != nil {
		return "", fmt.Errorf("use login link: %w", err)
	}
	return identity, nil
}

// CreateSession implements console.Store; the login is audited with it.
func (db *DB) CreateSession(ctx context.Context, s console.NewSession) error {
	return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM console_sessions WHERE expires_at < now() - interval '1 day'`); err != nil {
			return fmt.Errorf("prune console sessions: %w", err)
		}
		_, err := tx.Exec(ctx, `INSERT INTO console_sessions (id_hash, identity, csrf, idle_expires_at, expires_at)
			VALUES ($1, $2, $3, now() + least($4::float8, $5::float8) * interval '1 microsecond',
			        now() + $5::float8 * interval '1 microsecond')`,
			s.IDHash, storable(s.Identity), s.CSRF, float64(s.Idle.Microseconds()), float64(s.Lifetime.Microseconds()))
		if err != nil {
			return fmt.Errorf("store console session: %w", err)
		}
		return writeAudit(ctx, tx, AuditEntry{Actor: s.Identity, Action: console.ActionLogin, SubjectKind: SubjectConsoleSession,
			SubjectID: s.Identity, Detail: map[string]any{"via": s.Via}})
	})
}

// liveSession is the condition a live session's row meets.
const liveSession = `id_hash = $1 AND ended_at IS NULL AND idle_expires_at > now() AND expires_at > now()`

// Session implements console.Store.
func (db *DB) Session(ctx context.Context, idHash []byte, idle time.Duration, touch bool) (console.Session, error) {
	q := `SELECT identity, csrf, expires_at FROM console_sessions WHERE ` + liveSession
	args := []any{idHash}
	if touch {
		q = `UPDATE console_sessions SET seen_at = now(),
			idle_expires_at = least(now() + $2::float8 * interval '1 microsecond', expires_at)
			WHERE ` + liveSession + ` RETURNING identity, csrf, expires_at`
		args = append(args, float64(idle.Microseconds()))
	}
	var s console.Session
	err := db.pool.QueryRow(ctx, q, args...).Scan(&s.Identity, &s.CSRF, &s.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return console.Session{}, console.ErrNoSession
	}
	if err != nil {
		return console.Session{}, fmt.Errorf("read console session: %w", err)
	}
	return s, nil
}

// EndSession implements console.Store.
func (db *DB) EndSession(ctx context.Context, idHash []byte, by string) error {
	return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var identity string
		err := tx.QueryRow(ctx, `UPDATE console_sessions SET ended_at = now() WHERE `+liveSession+` RETURNING identity`, idHash).Scan(&identity)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("end console session: %w", err)
		}
		return writeAudit(ctx, tx, AuditEntry{Actor: by, Action: console.ActionLogout, SubjectKind: SubjectConsoleSession,
			SubjectID: identity, Detail: map[string]any{"sessions": 1}})
	})
}

// EndSessions implements console.Store.
func (db *DB) EndSessions(ctx context.Context, identity, by string) (int, error) {
	var n int
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE console_sessions SET ended_at = now()
			WHERE identity = $1 AND ended_at IS NULL AND expires_at > now()`, storable(identity))
		if err != nil {
			return fmt.Errorf("end console sessions: %w", err)
		}
		n = int(tag.RowsAffected())
		return writeAudit(ctx, tx, AuditEntry{Actor: by, Action: console.ActionLogout, SubjectKind: SubjectConsoleSession,
			SubjectID: identity, Detail: map[string]any{"sessions": n}})
	})
	return n, err
}

// AuditPage implements console.Store. Every filter is a parameter; an
// empty one matches everything.
func (db *DB) AuditPage(ctx context.Context, f console.AuditFilter) ([]console.AuditEntry, error) {
	if f.Limit <= 0 {
		return nil, nil
	}
	// A prefix is matched with left(), so no character of it is a wildcard.
	prefix := strings.HasSuffix(f.Action, ".")
	var since, until *time.Time
	if !f.Since.IsZero() {
		since = &f.Since
	}
	if !f.Until.IsZero() {
		until = &f.Until
	}
	rows, err := db.pool.Query(ctx, `SELECT id, at, actor, action, subject_kind, subject_id, detail FROM audit_log
		WHERE ($1 = '' OR actor = $1)
		  AND ($2 = '' OR (NOT $3 AND action = $2) OR ($3 AND left(action, length($2)) = $2))
		  AND ($4::timestamptz IS NULL OR at >= $4)
		  AND ($5::timestamptz IS NULL OR at < $5)
		  AND ($6 = 0 OR id < $6)
		  AND ($8 = '' OR detail->>'tool' = $8
		       OR (subject_kind = 'approval' AND subject_id IN (SELECT a.id FROM approvals a WHERE a.tool = $8)))
		  AND ($9 = '' OR detail->>'status' = $9)
		ORDER BY id DESC LIMIT $7`,
		storable(f.Actor), storable(f.Action), prefix, since, until, f.Before, f.Limit, storable(f.Tool), storable(f.Outcome))
	if err != nil {
		return nil, fmt.Errorf("read audit log: %w", err)
	}
	entries, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (console.AuditEntry, error) {
		var (
			e      console.AuditEntry
			detail []byte
		)
		if err := row.Scan(&e.ID, &e.At, &e.Actor, &e.Action, &e.SubjectKind, &e.SubjectID, &detail); err != nil {
			return e, err
		}
		if len(detail) > 0 {
			if err := json.Unmarshal(detail, &e.Detail); err != nil {
				return e, fmt.Errorf("decode detail: %w", err)
			}
		}
		return e, nil
	})
	if err != nil {
		return nil, fmt.Errorf("read audit log: %w", err)
	}
	return entries, nil
}

// Replicas implements console.Store.
func (db *DB) Replicas(ctx context.Context) ([]console.Replica, error) {
	rows, err := db.pool.Query(ctx, `SELECT owner, seen_at FROM replicas ORDER BY seen_at DESC, owner LIMIT 100`)
	if err != nil {
		return nil, fmt.Errorf("list replicas: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (console.Replica, error) {
		var r console.Replica
		return r, row.Scan(&r.Name, &r.SeenAt)
	})
	if err != nil {
		return nil, fmt.Errorf("list replicas: %w", err)
	}
	return list, nil
}

// consoleUsageColumns are the llm_usage columns the console groups by: only
// these names reach the statement.
var consoleUsageColumns = map[string]string{
	console.UsageByAgent: "agent", console.UsageByModel: "model", console.UsageByIdentity: "identity",
}

// UsageByDay implements console.Store.
func (db *DB) UsageByDay(ctx context.Context, by string, since time.Time) ([]console.UsageDay, error) {
	col, ok := consoleUsageColumns[by]
	if !ok {
		return nil, fmt.Errorf("usage by day: cannot group by %q", by)
	}
	rows, err := db.pool.Query(ctx, `SELECT date_trunc('day', at AT TIME ZONE 'UTC') AS day, `+col+`,
			sum(input_tokens + output_tokens + cache_read_tokens + cache_write_tokens)::bigint,
			coalesce(sum(cost_microdollars), 0)::bigint, (count(*) - count(cost_microdollars))::bigint
		FROM llm_usage WHERE at >= $1 GROUP BY 1, 2 ORDER BY 1, 2`, since)
	if err != nil {
		return nil, fmt.Errorf("usage by day: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (console.UsageDay, error) {
		var u console.UsageDay
		err := row.Scan(&u.Day, &u.Key, &u.Tokens, &u.CostMicros, &u.Unpriced)
		u.Day = time.Date(u.Day.Year(), u.Day.Month(), u.Day.Day(), 0, 0, 0, 0, time.UTC)
		return u, err
	})
	if err != nil {
		return nil, fmt.Errorf("usage by day: %w", err)
	}
	return list, nil
}

// AllowedIdentities implements console.Store.
func (db *DB) AllowedIdentities(ctx context.Context) ([]console.AllowedIdentity, error) {
	rows, err := db.pool.Query(ctx, `SELECT identity, display_name, allowed_by, updated_at FROM identities
		WHERE allowed ORDER BY updated_at DESC, identity LIMIT 1000`)
	if err != nil {
		return nil, fmt.Errorf("list allowed identities: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (console.AllowedIdentity, error) {
		var a console.AllowedIdentity
		return a, row.Scan(&a.Identity, &a.DisplayName, &a.AllowedBy, &a.Since)
	})
	if err != nil {
		return nil, fmt.Errorf("list allowed identities: %w", err)
	}
	return list, nil
}

// Conversations implements console.Store. The search is a substring
// (strpos, so no character of it is a wildcard).
func (db *DB) Conversations(ctx context.Context, search string, limit int) ([]console.Conversation, error) {
	rows, err := db.pool.Query(ctx, `SELECT key, agent, scope, last_seq, updated_at FROM sessions
		WHERE $1 = '' OR strpos(lower(key), lower($1)) > 0 OR strpos(lower(scope), lower($1)) > 0 OR strpos(lower(agent), lower($1)) > 0
		ORDER BY updated_at DESC, key LIMIT $2`, storable(search), limit)
	if err != nil {
		return nil, fmt.Errorf("list conversations: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (console.Conversation, error) {
		var c console.Conversation
		return c, row.Scan(&c.Key, &c.Agent, &c.Scope, &c.Messages, &c.UpdatedAt)
	})
	if err != nil {
		return nil, fmt.Errorf("list conversations: %w", err)
	}
	return list, nil
}

// ConversationMessages implements console.Store.
func (db *DB) ConversationMessages(ctx context.Context, key string, before int64, limit int) ([]console.ConversationMessage, error) {
	rows, err := db.pool.Query(ctx, `SELECT seq, role, content, tool_calls, tool_name, is_error, created_at FROM (
			SELECT * FROM messages WHERE session_key = $1 AND ($2 = 0 OR seq < $2) ORDER BY seq DESC LIMIT $3
		) m ORDER BY seq`, storable(key), before, limit)
	if err != nil {
		return nil, fmt.Errorf("read conversation: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (console.ConversationMessage, error) {
		var (
			m     console.ConversationMessage
			calls []byte
		)
		if err := row.Scan(&m.Seq, &m.Role, &m.Content, &calls, &m.ToolName, &m.IsError, &m.At); err != nil {
			return m, err
		}
		if len(calls) > 0 {
			var raw []struct {
				Name      string
				Arguments json.RawMessage
			}
			if err := json.Unmarshal(calls, &raw); err != nil {
				return m, fmt.Errorf("decode tool calls of %d: %w", m.Seq, err)
			}
			for _, c := range raw {
				// The arguments are the model's text, stored as a JSON string
				// or as the object itself.
				args := string(c.Arguments)
				var text string
				if json.Unmarshal(c.Arguments, &text) == nil {
					args = text
				}
				m.ToolCalls = append(m.ToolCalls, console.ToolCall{Name: c.Name, Arguments: args})
			}
		}
		return m, nil
	})
	if err != nil {
		return nil, fmt.Errorf("read conversation: %w", err)
	}
	return list, nil
}

// SessionApprovals implements console.Store.
func (db *DB) SessionApprovals(ctx context.Context, key string) ([]console.SessionApproval, error) {
	rows, err := db.pool.Query(ctx, `SELECT id, tool, command, status, decided_by, created_at FROM approvals
		WHERE session_key = $1 ORDER BY created_at DESC, id LIMIT 200`, storable(key))
	if err != nil {
		return nil, fmt.Errorf("list session approvals: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (console.SessionApproval, error) {
		var a console.SessionApproval
		return a, row.Scan(&a.ID, &a.Tool, &a.Command, &a.Status, &a.DecidedBy, &a.CreatedAt)
	})
	if err != nil {
		return nil, fmt.Errorf("list session approvals: %w", err)
	}
	return list, nil
}
