package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/bot/audit"
)

// Audit actions written by the approval and access stores.
const (
	ActionApprovalRequested   = "approval.requested"
	ActionApprovalDecided     = "approval.decided"
	ActionApprovalAllowAlways = "approval.allow_always"
	ActionApprovalUsed        = "approval.used" // an allowed-once approval ran its call
	ActionAccessRequested     = "access.requested"
	ActionAccessDecided       = "access.decided"
	ActionAccessRevoked       = "access.revoked"
)

// Audit subject kinds besides approvals.Kind and access.KindRequest.
const (
	// SubjectAllowAlways is an allow-always rule; its SubjectID is the tool.
	SubjectAllowAlways = "allow_always"
	// SubjectIdentity is a person; its SubjectID is the identity.
	SubjectIdentity = "identity"
)

// AuditEntry is one record of the audit log (audit.Entry).
type AuditEntry = audit.Entry

var _ audit.Store = (*DB)(nil)

// Audit returns the newest limit entries of the audit log, newest first.
func (db *DB) Audit(ctx context.Context, limit int) ([]AuditEntry, error) {
	if limit <= 0 {
		return nil, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT at, actor, action, subject_kind, subject_id, detail
		FROM audit_log ORDER BY id DESC LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("read audit log: %w", err)
	}
	entries, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (AuditEntry, error) {
		var (
			e      AuditEntry
			detail []byte
		)
		if err := row.Scan(&e.At, &e.Actor, &e.Action, &e.SubjectKind, &e.SubjectID, &detail); err != nil {
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

// writeAudit appends e (At is set by the database) within tx, so the record
// commits or rolls back with the change it describes.
func writeAudit(ctx context.Context, tx pgx.Tx, e AuditEntry) error {
	var detail []byte
	if len(e.Detail) > 0 {
		clean := make(map[string]any, len(e.Detail))
		for k, v := range e.Detail {
			if s, ok := v.(string); ok {
				// jsonb refuses \u0000, which encoding/json writes for NUL.
				v = storable(s)
			}
			clean[storable(k)] = v
		}
		var err error
		if detail, err = json.Marshal(clean); err != nil {
			return fmt.Errorf("audit %s: encode detail: %w", e.Action, err)
		}
	}
	_, err := tx.Exec(ctx, `INSERT INTO audit_log (actor, action, subject_kind, subject_id, detail)
		VALUES ($1, $2, $3, $4, $5)`,
		storable(e.Actor), storable(e.Action), storable(e.SubjectKind), storable(e.SubjectID), detail)
	if err != nil {
		return fmt.Errorf("audit %s: %w", e.Action, err)
	}
	return nil
}
