package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/tools/sessions"
)

var (
	_ sessions.SessionReader = (*DB)(nil)
	_ sessions.SessionWriter = (*DB)(nil)
)

// PostToSession implements tools.SessionWriter: the text becomes a user
// message of session, which recovery then runs (within a few seconds, on
// whichever replica gets to it first).
func (db *DB) PostToSession(ctx context.Context, session, text string) error {
	if _, err := db.Append(ctx, session, agentcore.Message{Role: agentcore.RoleUser, Content: text}); err != nil {
		return fmt.Errorf("post to session %s: %w", session, err)
	}
	return nil
}

// ListSessions implements tools.SessionReader.
func (db *DB) ListSessions(ctx context.Context, agent, scope string, limit int) ([]sessions.SessionInfo, error) {
	rows, err := db.pool.Query(ctx, `
		SELECT s.key, s.scope, (SELECT count(*) FROM messages m WHERE m.session_key = s.key), s.updated_at
		FROM sessions s
		WHERE s.agent = $1 AND ($2 = '' OR s.scope = $2 OR starts_with(s.scope, $2 || ':'))
		ORDER BY s.updated_at DESC LIMIT $3`, storable(agent), storable(scope), limit)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (sessions.SessionInfo, error) {
		var s sessions.SessionInfo
		return s, r.Scan(&s.Key, &s.Scope, &s.Messages, &s.Updated)
	})
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return out, nil
}

// SessionLines implements tools.SessionReader.
func (db *DB) SessionLines(ctx context.Context, session string, limit int) ([]sessions.SessionLine, error) {
	rows, err := db.pool.Query(ctx, `
		SELECT role, content, tool_name, created_at FROM (
			SELECT seq, role, content, tool_name, created_at FROM messages
			WHERE session_key = $1 ORDER BY seq DESC LIMIT $2) newest
		ORDER BY seq`, storable(session), limit)
	if err != nil {
		return nil, fmt.Errorf("session lines: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (sessions.SessionLine, error) {
		var l sessions.SessionLine
		return l, r.Scan(&l.Role, &l.Content, &l.ToolName, &l.At)
	})
	if err != nil {
		return nil, fmt.Errorf("session lines: %w", err)
	}
	return out, nil
}
