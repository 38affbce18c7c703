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

// messageCols are the columns collectMessages reads.
const messageCols = `role, content, tool_calls, tool_call_id, tool_name, is_error, coalesce(external_id, ''), seq, images`

// Load returns the messages of session after its /reset mark, in order:
// the newest limit of them when limit > 0, else all. An unknown session
// has no messages.
func (db *DB) Load(ctx context.Context, session string, limit int) ([]agentcore.Message, error) {
	msgs, err := retryValue(ctx, func(ctx context.Context) ([]agentcore.Message, error) {
		var (
			rows pgx.Rows
			err  error
		)
		if limit > 0 {
			rows, err = db.pool.Query(ctx, `SELECT `+messageCols+` FROM (
					SELECT * FROM messages WHERE session_key = $1 AND seq > `+resetMark+`
					ORDER BY seq DESC LIMIT $2
				) newest ORDER BY seq`, session, limit)
		} else {
			rows, err = db.pool.Query(ctx, `SELECT `+messageCols+` FROM messages
				WHERE session_key = $1 AND seq > `+resetMark+` ORDER BY seq`, session)
		}
		if err != nil {
			return nil, err
		}
		return collectMessages(rows, limit)
	})
	if err != nil {
		return nil, fmt.Errorf("load session %s: %w", session, err)
	}
	return msgs, nil
}

// collectMessages reads rows of messages (messageCols), at most limit of
// them (0: no limit), into a slice made that large up front: a history
// window is read for every message, and growing its slice by doubling
// allocated twice the window again. One messageScan serves every row, so
// a row costs only its strings.
func collectMessages(rows pgx.Rows, limit int) ([]agentcore.Message, error) {
	defer rows.Close()
	out := make([]agentcore.Message, 0, max(limit, 0))
	s := newMessageScan()
	for rows.Next() {
		m, err := s.scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// messageScan is the destination of one row of messageCols. Scanning into
// the same fields row after row allocates them, and the argument list,
// once per query rather than once per row.
type messageScan struct {
	m        agentcore.Message
	role     roleScan
	rawCalls []byte
	rawImgs  []byte
	dest     []any
}

func newMessageScan() *messageScan {
	s := &messageScan{}
	s.dest = []any{&s.role, &s.m.Content, &s.rawCalls, &s.m.ToolCallID, &s.m.ToolName, &s.m.IsError, &s.m.ExternalID, &s.m.Seq, &s.rawImgs}
	return s
}

// roleScan reads a message's role from the driver's memory: the four
// roles the agent writes are constants, not a new string for every row of
// every window read.
type roleScan struct{ role agentcore.Role }

// ScanBytes implements pgtype.BytesScanner.
func (r *roleScan) ScanBytes(v []byte) error {
	switch agentcore.Role(v) {
	case agentcore.RoleUser:
		r.role = agentcore.RoleUser
	case agentcore.RoleAssistant:
		r.role = agentcore.RoleAssistant
	case agentcore.RoleTool:
		r.role = agentcore.RoleTool
	case agentcore.RoleSystem:
		r.role = agentcore.RoleSystem
	default:
		r.role = agentcore.Role(v)
	}
	return nil
}

// scan reads the current row into a new message.
func (s *messageScan) scan(rows pgx.Rows) (agentcore.Message, error) {
	s.m, s.role, s.rawCalls, s.rawImgs = agentcore.Message{}, roleScan{}, s.rawCalls[:0], s.rawImgs[:0]
	if err := rows.Scan(s.dest...); err != nil {
		return agentcore.Message{}, err
	}
	m := s.m
	m.Role = s.role.role
	if len(s.rawCalls) > 0 {
		var calls []storedToolCall
		if err := json.Unmarshal(s.rawCalls, &calls); err != nil {
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
	images, err := decodeImages(s.rawImgs)
	if err != nil {
		return m, err
	}
	m.Images = images
	return m, nil
}

// appendSQL appends a batch of messages in one statement, so in one round
// trip and one commit. The upsert of the session row adds the batch size
// ($4) to last_seq and holds the row lock until commit, which serialises
// appends to one session: each sees the last_seq its predecessor committed,
// so seqs have no gaps or duplicates however many writers there are. The
// messages get seq last_seq-$4+1 … last_seq. A unique violation (an
// ExternalID the session already has) aborts the whole statement, so neither
// the messages nor the new last_seq are stored. (PostgreSQL runs a
// data-modifying WITH clause to completion even when nothing reads it.)
const appendSQL = appendCTE + `
	SELECT last_seq FROM s`

// appendCTE is appendSQL's WITH clause.
const appendCTE = `WITH s AS (
		INSERT INTO sessions AS s (key, agent, scope, last_seq) VALUES ($1, $2, $3, $4::bigint)
		ON CONFLICT (key) DO UPDATE SET last_seq = s.last_seq + excluded.last_seq, updated_at = now()
		RETURNING s.last_seq
	), ins AS (
		INSERT INTO messages
			(session_key, seq, role, content, tool_calls, tool_call_id, tool_name, is_error, external_id, images)
		SELECT $1, s.last_seq - $4::bigint + m.ord, m.role, m.content, m.tool_calls::jsonb,
			m.tool_call_id, m.tool_name, m.is_error, m.external_id, m.images::jsonb
		FROM s, unnest($5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::bool[], $11::text[], $12::text[])
			WITH ORDINALITY AS m (role, content, tool_calls, tool_call_id, tool_name, is_error, external_id, images, ord)
	)`

// Append adds msgs to the end of session atomically, creating the session if
// needed, and returns the seq of the last one. A message whose ExternalID the
// session already has fails the whole call with agentcore.ErrDuplicate and
// stores nothing. Text PostgreSQL cannot hold (NUL bytes, invalid UTF-8) is
// stored with U+FFFD in its place. It is one statement, whose commit is
// shared with the appends and inserts made at the same time (groupCommit);
// transient errors (a dropped connection) are retried, which is safe for a
// user message (its ExternalID makes a repeat fail with ErrDuplicate).
func (db *DB) Append(ctx context.Context, session string, msgs ...agentcore.Message) (int64, error) {
	if len(msgs) == 0 {
		last, err := retryValue(ctx, func(ctx context.Context) (int64, error) {
			var last int64
			err := db.pool.QueryRow(ctx, `SELECT last_seq FROM sessions WHERE key = $1`, session).Scan(&last)
			if errors.Is(err, pgx.ErrNoRows) {
				return 0, nil
			}
			return last, err
		})
		if err != nil {
			return 0, fmt.Errorf("append to session %s: %w", session, err)
		}
		return last, nil
	}
	b, err := newBatch(session, msgs)
	if err != nil {
		return 0, err
	}
	row := db.appends.rowOnce(db.pool, session, appendSQL, b.args())
	last, err := retryValue(ctx, func(ctx context.Context) (int64, error) {
		var last int64
		err := row(ctx, &last)
		return last, err
	})
	if err != nil {
		return 0, appendError(session, err)
	}
	return last, nil
}

// appendError maps a unique violation on ExternalID to ErrDuplicate.
func appendError(session string, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == externalIDConstraint {
		return fmt.Errorf("append to session %s: %w", session, agentcore.ErrDuplicate)
	}
	return fmt.Errorf("append to session %s: %w", session, err)
}

// batch is a list of messages as the parallel arrays appendSQL unnests.
type batch struct {
	session, agent, scope               string
	n                                   int64
	roles, contents, callIDs, toolNames []string
	calls, externalIDs, images          []*string
	isErrors                            []bool
}

func newBatch(session string, msgs []agentcore.Message) (*batch, error) {
	b := &batch{session: session, scope: session, n: int64(len(msgs))}
	if k, err := agentcore.ParseSessionKey(session); err == nil {
		b.agent, b.scope = k.Agent, k.Scope
	}
	n := len(msgs)
	b.roles, b.contents, b.callIDs, b.toolNames = make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	b.calls, b.externalIDs, b.images, b.isErrors = make([]*string, n), make([]*string, n), make([]*string, n), make([]bool, n)
	for i, m := range msgs {
		encoded, err := encodeToolCalls(m.ToolCalls)
		if err != nil {
			return nil, fmt.Errorf("append to session %s: %w", session, err)
		}
		if encoded != nil {
			s := string(encoded)
			b.calls[i] = &s
		}
		if b.images[i], err = encodeImages(m.Images); err != nil {
			return nil, fmt.Errorf("append to session %s: %w", session, err)
		}
		b.roles[i], b.contents[i] = string(m.Role), storable(m.Content)
		b.callIDs[i], b.toolNames[i] = storable(m.ToolCallID), storable(m.ToolName)
		b.isErrors[i], b.externalIDs[i] = m.IsError, nullIfEmpty(storable(m.ExternalID))
	}
	return b, nil
}

// appendParams is how many parameters appendSQL takes; a statement built
// on appendCTE numbers its own from appendParams+1.
const appendParams = 12

// args are appendSQL's parameters $1…$12.
func (b *batch) args(extra ...any) []any {
	return append([]any{b.session, b.agent, b.scope, b.n,
		b.roles, b.contents, b.calls, b.callIDs, b.toolNames, b.isErrors, b.externalIDs, b.images}, extra...)
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
