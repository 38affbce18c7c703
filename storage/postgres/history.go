package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/switchboard-chat/switchboard/agentcore"
)

var _ agentcore.History = (*DB)(nil)

// externalIDConstraint is the unique index that refuses a second message with
// the same ExternalID in a session.
const externalIDConstraint = "messages_session_external_id_key"

// storedToolCall is one element of messages.tool_calls. Arguments keeps the
// model's raw text as a JSON string, so it round-trips byte for byte even
// when a model produced invalid JSON.
type storedToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Load returns the messages of session in order: the newest limit of them
// when limit > 0, else all. An unknown session has no messages.
func (db *DB) Load(ctx context.Context, session string, limit int) ([]agentcore.Message, error) {
	const cols = `role, content, tool_calls, tool_call_id, tool_name, is_error, coalesce(external_id, '')`
	var (
		rows pgx.Rows
		err  error
	)
	if limit > 0 {
		rows, err = db.pool.Query(ctx, `SELECT `+cols+` FROM (
				SELECT * FROM messages WHERE session_key = $1 ORDER BY seq DESC LIMIT $2
			) newest ORDER BY seq`, session, limit)
	} else {
		rows, err = db.pool.Query(ctx, `SELECT `+cols+` FROM messages WHERE session_key = $1 ORDER BY seq`, session)
	}
	if err != nil {
		return nil, fmt.Errorf("load session %s: %w", session, err)
	}
	msgs, err := pgx.CollectRows(rows, scanMessage)
	if err != nil {
		return nil, fmt.Errorf("load session %s: %w", session, err)
	}
	return msgs, nil
}

func scanMessage(row pgx.CollectableRow) (agentcore.Message, error) {
	var (
		m        agentcore.Message
		role     string
		rawCalls []byte
	)
	if err := row.Scan(&role, &m.Content, &rawCalls, &m.ToolCallID, &m.ToolName, &m.IsError, &m.ExternalID); err != nil {
		return m, err
	}
	m.Role = agentcore.Role(role)
	if len(rawCalls) > 0 {
		var calls []storedToolCall
		if err := json.Unmarshal(rawCalls, &calls); err != nil {
			return m, fmt.Errorf("decode tool calls: %w", err)
		}
		for _, c := range calls {
			tc := agentcore.ToolCall{ID: c.ID, Name: c.Name}
			if c.Arguments != "" {
				tc.Arguments = json.RawMessage(c.Arguments)
			}
			m.ToolCalls = append(m.ToolCalls, tc)
		}
	}
	return m, nil
}

// Append adds msgs to the end of session in one transaction, creating the
// session if needed, and returns the seq of the last one. A message whose
// ExternalID the session already has fails the whole call with
// agentcore.ErrDuplicate and stores nothing. Text PostgreSQL cannot hold (NUL
// bytes, invalid UTF-8) is stored with U+FFFD in its place.
func (db *DB) Append(ctx context.Context, session string, msgs ...agentcore.Message) (int64, error) {
	if len(msgs) == 0 {
		var last int64
		err := db.pool.QueryRow(ctx, `SELECT last_seq FROM sessions WHERE key = $1`, session).Scan(&last)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return 0, fmt.Errorf("append to session %s: %w", session, err)
		}
		return last, nil
	}
	agent, scope := "", session
	if k, err := agentcore.ParseSessionKey(session); err == nil {
		agent, scope = k.Agent, k.Scope
	}
	rows := make([][]any, len(msgs))
	for i, m := range msgs {
		calls, err := encodeToolCalls(m.ToolCalls)
		if err != nil {
			return 0, fmt.Errorf("append to session %s: %w", session, err)
		}
		rows[i] = []any{string(m.Role), storable(m.Content), calls, storable(m.ToolCallID),
			storable(m.ToolName), m.IsError, nullIfEmpty(storable(m.ExternalID))}
	}

	var last int64
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO sessions (key, agent, scope) VALUES ($1, $2, $3)
			ON CONFLICT (key) DO NOTHING`, session, agent, scope); err != nil {
			return err
		}
		// The row lock serialises appends to one session, so seqs have no
		// gaps or duplicates however many writers there are.
		if err := tx.QueryRow(ctx, `SELECT last_seq FROM sessions WHERE key = $1 FOR UPDATE`, session).Scan(&last); err != nil {
			return err
		}
		b := &pgx.Batch{}
		for _, r := range rows {
			last++
			b.Queue(`INSERT INTO messages
				(session_key, seq, role, content, tool_calls, tool_call_id, tool_name, is_error, external_id)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
				append([]any{session, last}, r...)...)
		}
		b.Queue(`UPDATE sessions SET last_seq = $2, updated_at = now() WHERE key = $1`, session, last)
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == externalIDConstraint {
			return 0, fmt.Errorf("append to session %s: %w", session, agentcore.ErrDuplicate)
		}
		return 0, fmt.Errorf("append to session %s: %w", session, err)
	}
	return last, nil
}

// encodeToolCalls renders calls for the tool_calls column; none is NULL.
func encodeToolCalls(calls []agentcore.ToolCall) ([]byte, error) {
	if len(calls) == 0 {
		return nil, nil
	}
	stored := make([]storedToolCall, len(calls))
	for i, c := range calls {
		stored[i] = storedToolCall{ID: storable(c.ID), Name: storable(c.Name), Arguments: storable(string(c.Arguments))}
	}
	b, err := json.Marshal(stored)
	if err != nil {
		return nil, fmt.Errorf("encode tool calls: %w", err)
	}
	return b, nil
}
