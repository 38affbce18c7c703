package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/bot/access"
)

var _ access.RequestStore = (*DB)(nil)

// accessLockClass is the first key of the transaction advisory lock that
// serializes OpenAccessRequest per platform (the second key is a hash of the
// platform), so the cap on pending requests holds under concurrency.
const accessLockClass int32 = 0x5b0a_0ac5

// accessCols are the columns scanAccessRequest reads, in order.
const accessCols = `id, identity, display_name, platform, chat_id, thread_id, status, decided_by,
	created_at, decided_at`

// OpenAccessRequest stores r as pending (r.Status is ignored) and audits it,
// unless the identity has a pending request, or a request denied less than
// cooldown ago: then it returns that one with created=false. When the
// platform of r.Chat already has maxPending pending requests it returns an
// error wrapping access.ErrTooManyPending; maxPending <= 0 means no cap. r.ID
// (random and unguessable), r.Identity and r.Chat.Platform must be set; a
// zero CreatedAt means now.
func (db *DB) OpenAccessRequest(ctx context.Context, r access.Request, maxPending int, cooldown time.Duration) (access.Request, bool, error) {
	switch {
	case r.ID == "":
		return access.Request{}, false, errors.New("open access request: empty id; set a random unguessable id")
	case r.Identity == "":
		return access.Request{}, false, fmt.Errorf("open access request %s: empty identity", r.ID)
	case r.Chat.Platform == "":
		return access.Request{}, false, fmt.Errorf("open access request %s: empty platform", r.ID)
	}
	var createdAt *time.Time
	if !r.CreatedAt.IsZero() {
		createdAt = &r.CreatedAt
	}
	identity, platform := storable(r.Identity), storable(r.Chat.Platform)
	var (
		out     access.Request
		created bool
	)
	// The transaction may run again after a transient error: it finds the
	// request a lost commit stored and returns it with created=false.
	err := withRetry(ctx, func(ctx context.Context) error {
		created = false
		return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, accessLockClass, platform); err != nil {
				return err
			}
			existing, err := scanAccessRequest(tx.QueryRow(ctx, `SELECT `+accessCols+` FROM access_requests
				WHERE identity = $1
				  AND (status = 'pending'
				       OR (status = 'denied' AND decided_at > now() - $2::float8 * interval '1 microsecond'))
				ORDER BY status = 'pending' DESC, decided_at DESC
				LIMIT 1`, identity, float64(cooldown.Microseconds())))
			if err == nil {
				out = existing
				return nil
			}
			if !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
			if maxPending > 0 {
				var pending int
				if err := tx.QueryRow(ctx, `SELECT count(*) FROM access_requests WHERE platform = $1 AND status = 'pending'`,
					platform).Scan(&pending); err != nil {
					return err
				}
				if pending >= maxPending {
					return fmt.Errorf("%s has %d pending: %w; an admin must decide some first", platform, pending, access.ErrTooManyPending)
				}
			}
			out, err = scanAccessRequest(tx.QueryRow(ctx, `INSERT INTO access_requests
					(id, identity, display_name, platform, chat_id, thread_id, created_at)
				VALUES ($1, $2, $3, $4, $5, $6, coalesce($7::timestamptz, now()))
				ON CONFLICT (identity) WHERE status = 'pending' DO NOTHING
				RETURNING `+accessCols,
				storable(r.ID), identity, storable(r.DisplayName), platform, storable(r.Chat.ChatID),
				storable(r.Chat.ThreadID), createdAt))
			if errors.Is(err, pgx.ErrNoRows) {
				// A concurrent open from another platform lock won; it has
				// committed by now, so a fresh statement sees it.
				out, err = scanAccessRequest(tx.QueryRow(ctx, `SELECT `+accessCols+` FROM access_requests
					WHERE identity = $1 AND status = 'pending'`, identity))
				return err
			}
			if err != nil {
				return err
			}
			created = true
			return writeAudit(ctx, tx, AuditEntry{
				Actor: r.Identity, Action: ActionAccessRequested,
				SubjectKind: access.KindRequest, SubjectID: out.ID,
				Detail: map[string]any{"display_name": out.DisplayName, "platform": out.Chat.Platform},
			})
		})
	})
	if err != nil {
		return access.Request{}, false, fmt.Errorf("open access request for %s: %w", r.Identity, err)
	}
	return out, created, nil
}

// GetAccessRequest returns access request id, or an error wrapping
// bot.ErrNotFound. Transient errors are retried.
func (db *DB) GetAccessRequest(ctx context.Context, id string) (access.Request, error) {
	return retryValue(ctx, func(ctx context.Context) (access.Request, error) { return db.getAccessRequest(ctx, id) })
}

// getAccessRequest is GetAccessRequest without retries.
func (db *DB) getAccessRequest(ctx context.Context, id string) (access.Request, error) {
	return getByID(ctx, db, "access request", `SELECT `+accessCols+` FROM access_requests WHERE id = $1`, id, scanAccessRequest)
}

// DecideAccessRequest moves pending request id to status (approved or
// denied), decided by `by`, in one transaction with its audit record and, on
// approval, with putting the identity on the allowlist. Of concurrent
// decisions exactly one wins. It returns the request as it is afterwards and
// whether this call decided it; an unknown id gives an error wrapping
// bot.ErrNotFound.
func (db *DB) DecideAccessRequest(ctx context.Context, id, status, by string) (access.Request, bool, error) {
	if status != access.StatusApproved && status != access.StatusDenied {
		return access.Request{}, false, fmt.Errorf("decide access request %s: %q is not a decision; use approved or denied", id, status)
	}
	if by == "" {
		return access.Request{}, false, fmt.Errorf("decide access request %s: say who decided", id)
	}
	r, decided, err := decideRetried(ctx, db,
		func(tx pgx.Tx) (access.Request, error) {
			return scanAccessRequest(tx.QueryRow(ctx, `UPDATE access_requests
					SET status = $2, decided_by = $3, decided_at = now()
					WHERE id = $1 AND status = 'pending'
					RETURNING `+accessCols, id, status, storable(by)))
		},
		func(tx pgx.Tx, r access.Request) error {
			if status == access.StatusApproved {
				if err := allow(ctx, tx, r.Identity, r.DisplayName, by); err != nil {
					return err
				}
			}
			return writeAudit(ctx, tx, AuditEntry{
				Actor: by, Action: ActionAccessDecided,
				SubjectKind: access.KindRequest, SubjectID: id,
				Detail: map[string]any{"status": status, "identity": r.Identity},
			})
		},
		func(ctx context.Context) (access.Request, error) { return db.getAccessRequest(ctx, id) })
	if err != nil {
		return access.Request{}, false, fmt.Errorf("decide access request %s: %w", id, err)
	}
	return r, decided, nil
}

// Revoke takes identity off the allowlist, audited, and reports whether it
// was allowed. Revoking an identity that is not allowed changes nothing but
// is audited too.
func (db *DB) Revoke(ctx context.Context, identity, by string) (bool, error) {
	if identity == "" {
		return false, errors.New("revoke: empty identity; give platform:user_id")
	}
	var was bool
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE identities SET allowed = false, updated_at = now()
			WHERE identity = $1 AND allowed`, storable(identity))
		if err != nil {
			return err
		}
		was = tag.RowsAffected() > 0
		return writeAudit(ctx, tx, AuditEntry{
			Actor: by, Action: ActionAccessRevoked,
			SubjectKind: SubjectIdentity, SubjectID: identity,
			Detail: map[string]any{"was_allowed": was},
		})
	})
	if err != nil {
		return false, fmt.Errorf("revoke %s: %w", identity, err)
	}
	return was, nil
}

// scanAccessRequest reads one row of accessCols.
func scanAccessRequest(row pgx.Row) (access.Request, error) {
	var (
		r         access.Request
		decidedAt *time.Time
	)
	err := row.Scan(&r.ID, &r.Identity, &r.DisplayName, &r.Chat.Platform, &r.Chat.ChatID, &r.Chat.ThreadID,
		&r.Status, &r.DecidedBy, &r.CreatedAt, &decidedAt)
	if decidedAt != nil {
		r.DecidedAt = *decidedAt
	}
	return r, err
}

// PendingAccessRequests lists the pending access requests, oldest first.
func (db *DB) PendingAccessRequests(ctx context.Context) ([]access.Request, error) {
	return retryValue(ctx, func(ctx context.Context) ([]access.Request, error) {
		rows, err := db.pool.Query(ctx, `SELECT `+accessCols+` FROM access_requests WHERE status = 'pending' ORDER BY created_at LIMIT 500`)
		if err != nil {
			return nil, err
		}
		return pgx.CollectRows(rows, func(row pgx.CollectableRow) (access.Request, error) { return scanAccessRequest(row) })
	})
}
