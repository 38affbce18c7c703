package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
)

var _ bot.Outbox = (*DB)(nil)

// maxErrorLen caps the stored last_error of an outbox row.
const maxErrorLen = 2000

// storedButton is one button in outbox.buttons.
type storedButton struct {
	Label string `json:"label"`
	Data  string `json:"data"`
}

// Enqueue stores m as pending and returns its id. When m.SourceSeq > 0 and
// the session already has a row for that seq, or m.Key is set and a row
// has that key, nothing is stored and the id of the existing row is
// returned.
func (db *DB) Enqueue(ctx context.Context, m bot.OutboxMessage) (int64, error) {
	buttons, err := encodeButtons(m.Buttons)
	if err != nil {
		return 0, fmt.Errorf("enqueue reply: %w", err)
	}
	file, err := encodeFile(m.File)
	if err != nil {
		return 0, fmt.Errorf("enqueue reply: %w", err)
	}
	var seq *int64
	if m.SourceSeq != 0 {
		seq = &m.SourceSeq
	}
	session, key := nullIfEmpty(m.Session), nullIfEmpty(storable(m.Key))
	var id int64
	// No conflict target: either unique index, (session_key, source_seq)
	// or dedupe_key, makes the row one that exists.
	err = db.pool.QueryRow(ctx, `INSERT INTO outbox
			(session_key, source_seq, platform, chat_id, thread_id, text, buttons, reply_to, file, dedupe_key, replaces)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT DO NOTHING
		RETURNING id`,
		session, seq, storable(m.To.Platform), storable(m.To.ChatID), storable(m.To.ThreadID),
		storable(m.Text), buttons, storable(m.ReplyTo), file, key, replaces(m.Replaces)).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		id, err = db.existingRow(ctx, session, seq, key)
	}
	if err != nil {
		return 0, fmt.Errorf("enqueue reply to %s: %w", m.To, err)
	}
	return id, nil
}

// existingRow is the id of the row an Enqueue conflicted with: the one
// with key, when set, else the session's row for seq. The conflicting
// insert has committed by now, so a fresh statement sees it. Each lookup
// is one of the unique indexes.
func (db *DB) existingRow(ctx context.Context, session *string, seq *int64, key *string) (int64, error) {
	var id int64
	if key != nil {
		err := db.pool.QueryRow(ctx, `SELECT id FROM outbox WHERE dedupe_key = $1`, key).Scan(&id)
		if !errors.Is(err, pgx.ErrNoRows) || seq == nil {
			return id, err
		}
	}
	err := db.pool.QueryRow(ctx, `SELECT id FROM outbox WHERE session_key = $1 AND source_seq = $2`, session, seq).Scan(&id)
	return id, err
}

// claimSQL leases due pending messages: $1 owner, $2 limit, $3 lease in
// microseconds, $4 how long (microseconds) an owner may go without a
// heartbeat before its leases are void, $5 whether to write the owner's
// heartbeat when anything is claimed (beat: the CTE runs whether or not
// the query reads it, and commits with the claims).
const claimSQL = `WITH due AS MATERIALIZED (
		SELECT id FROM outbox
		WHERE status = 'pending' AND next_attempt_at <= now()
		  AND (claimed_until IS NULL OR claimed_until < now()
		       OR EXISTS (SELECT 1 FROM replicas r WHERE r.owner = outbox.claimed_by
		                  AND r.seen_at < now() - $4::float8 * interval '1 microsecond'))
		ORDER BY id
		LIMIT $2
		FOR UPDATE SKIP LOCKED
	), beat AS (
		INSERT INTO replicas (owner) SELECT $1 WHERE $5::bool AND EXISTS (SELECT 1 FROM due)
		ON CONFLICT (owner) DO UPDATE SET seen_at = now()
	)
	UPDATE outbox o SET
		attempts = o.attempts + 1,
		claimed_by = $1,
		claimed_until = now() + $3::float8 * interval '1 microsecond'
	FROM due WHERE o.id = due.id
	RETURNING o.id, coalesce(o.session_key, ''), coalesce(o.source_seq, 0), o.platform, o.chat_id,
		o.thread_id, o.text, o.buttons, o.reply_to, o.attempts, o.file, o.replaces`

// OwnerTimeout is how long a dispatcher may go without a Heartbeat before
// the rows it claimed are claimed again by others (it is presumed dead).
const OwnerTimeout = 4 * time.Second

// Heartbeat records that owner is alive; call it about once a second while
// it holds claims (bot.Liveness).
func (db *DB) Heartbeat(ctx context.Context, owner string) error {
	err := withRetry(ctx, func(ctx context.Context) error {
		_, err := db.pool.Exec(ctx, `INSERT INTO replicas (owner) VALUES ($1)
			ON CONFLICT (owner) DO UPDATE SET seen_at = now()`, storable(owner))
		return err
	})
	if err != nil {
		return fmt.Errorf("outbox heartbeat of %s: %w", owner, err)
	}
	return nil
}

// EndHeartbeat forgets owner's heartbeat: it holds no claims that need it
// (see bot.Liveness), and what it claims before its next Heartbeat is
// claimed again by others only when the lease runs out.
func (db *DB) EndHeartbeat(ctx context.Context, owner string) error {
	err := withRetry(ctx, func(ctx context.Context) error {
		_, err := db.pool.Exec(ctx, `DELETE FROM replicas WHERE owner = $1`, storable(owner))
		return err
	})
	if err != nil {
		return fmt.Errorf("end heartbeat of %s: %w", owner, err)
	}
	return nil
}

// Claim leases up to limit due pending messages to owner for lease, oldest
// first, and counts the attempt. Rows another live claimer holds are
// skipped, so two claimers never get the same message; a message whose lease
// expired, or whose claimer's last Heartbeat is older than OwnerTimeout (it
// died: its sends are in doubt), can be claimed again. A claimer that never
// sent a heartbeat keeps its rows for the lease. With beat, a Claim that
// claims anything also writes owner's Heartbeat in the same statement, so
// a claimer that had none has one the moment its claims commit (see
// bot.Liveness); an idle poll that claims nothing writes nothing.
func (db *DB) Claim(ctx context.Context, owner string, limit int, lease time.Duration, beat bool) ([]bot.OutboxMessage, error) {
	if limit <= 0 {
		return nil, nil
	}
	rows, err := db.pool.Query(ctx, claimSQL, owner, limit, float64(lease.Microseconds()), float64(OwnerTimeout.Microseconds()), beat)
	if err != nil {
		return nil, fmt.Errorf("claim outbox: %w", err)
	}
	msgs, err := pgx.CollectRows(rows, scanOutbox)
	if err != nil {
		return nil, fmt.Errorf("claim outbox: %w", err)
	}
	slices.SortFunc(msgs, func(a, b bot.OutboxMessage) int { return cmp.Compare(a.ID, b.ID) })
	return msgs, nil
}

// scanOutbox reads one row RETURNed by claimSQL.
func scanOutbox(row pgx.CollectableRow) (bot.OutboxMessage, error) {
	var (
		m             bot.OutboxMessage
		buttons, file []byte
	)
	if err := row.Scan(&m.ID, &m.Session, &m.SourceSeq, &m.To.Platform, &m.To.ChatID,
		&m.To.ThreadID, &m.Text, &buttons, &m.ReplyTo, &m.Attempts, &file, &m.Replaces); err != nil {
		return m, err
	}
	b, err := decodeButtons(buttons)
	if err != nil {
		return m, err
	}
	m.Buttons = b
	m.File, err = decodeFile(file)
	return m, err
}

// isRow is the condition that an outbox row is r (parameters $1, $2, $3:
// id, session, seq; see rowArgs): its id alone could name a later row that
// took the id of a lost reply, one committed on a primary that failed over
// to an asynchronous standby before the standby received it (see
// bot.OutboxRow).
const isRow = `id = $1 AND session_key IS NOT DISTINCT FROM $2 AND source_seq IS NOT DISTINCT FROM $3`

// rowArgs are isRow's parameters for r, stored as the row was.
func rowArgs(r bot.OutboxRow) []any {
	var seq *int64
	if r.SourceSeq != 0 {
		seq = &r.SourceSeq
	}
	return []any{r.ID, nullIfEmpty(r.Session), seq}
}

// Retry releases pending row r to be tried again at `at`, recording
// reason.
func (db *DB) Retry(ctx context.Context, r bot.OutboxRow, at time.Time, reason string) error {
	return db.updatePending(ctx, "retry", r, `UPDATE outbox SET next_attempt_at = $4, last_error = $5,
			claimed_by = NULL, claimed_until = NULL
		WHERE `+isRow+` AND status = 'pending'`, at, truncate(storable(reason), maxErrorLen))
}

// Fail gives up on pending row r for good, recording reason.
func (db *DB) Fail(ctx context.Context, r bot.OutboxRow, reason string) error {
	return db.updatePending(ctx, "fail", r, `UPDATE outbox SET status = 'failed', last_error = $4,
			claimed_by = NULL, claimed_until = NULL
		WHERE `+isRow+` AND status = 'pending'`, truncate(storable(reason), maxErrorLen))
}

// updatePending runs an update of row r (isRow, then args from $4) that
// applies only to a pending message and explains why when it applied to
// none.
func (db *DB) updatePending(ctx context.Context, what string, r bot.OutboxRow, sql string, args ...any) error {
	ctx = context.WithoutCancel(ctx)
	id := r.ID
	var tag pgconn.CommandTag
	err := withRetry(ctx, func(ctx context.Context) error {
		var err error
		tag, err = db.pool.Exec(ctx, sql, append(rowArgs(r), args...)...)
		return err
	})
	if err != nil {
		return fmt.Errorf("%s outbox message %d: %w", what, id, err)
	}
	if tag.RowsAffected() > 0 {
		return nil
	}
	var status string
	err = db.pool.QueryRow(ctx, `SELECT status FROM outbox WHERE `+isRow, rowArgs(r)...).Scan(&status)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%s outbox message %d: no such message", what, id)
	}
	if err != nil {
		return fmt.Errorf("%s outbox message %d: %w", what, id, err)
	}
	return fmt.Errorf("%s outbox message %d: it is already %s", what, id, status)
}

func encodeButtons(rows [][]channels.Button) ([]byte, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	stored := make([][]storedButton, len(rows))
	for i, row := range rows {
		stored[i] = make([]storedButton, len(row))
		for j, b := range row {
			stored[i][j] = storedButton{Label: storable(b.Label), Data: storable(b.Data)}
		}
	}
	b, err := json.Marshal(stored)
	if err != nil {
		return nil, fmt.Errorf("encode buttons: %w", err)
	}
	return b, nil
}

func decodeButtons(raw []byte) ([][]channels.Button, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var stored [][]storedButton
	if err := json.Unmarshal(raw, &stored); err != nil {
		return nil, fmt.Errorf("decode buttons: %w", err)
	}
	rows := make([][]channels.Button, len(stored))
	for i, row := range stored {
		rows[i] = make([]channels.Button, len(row))
		for j, b := range row {
			rows[i][j] = channels.Button{Label: b.Label, Data: b.Data}
		}
	}
	return rows, nil
}
