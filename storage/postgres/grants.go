package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/bot/access"
)

var _ access.GrantStore = (*DB)(nil)

// grantRequestCols are a grant request's columns, its votes included; they
// name the grant_requests table (votesOf).
var grantRequestCols = `id, server, tool, agent, subject_kind, subject, platform, chat_id, thread_id, status,
	coalesce(decided_by, ''), created_at, quorum, approvers, self_approve, ` + votesOf(access.KindGrantRequest, "grant_requests.id")

func scanGrantRequest(row pgx.Row) (access.GrantRequest, error) {
	var (
		r     access.GrantRequest
		votes []byte
	)
	err := row.Scan(&r.ID, &r.Server, &r.Tool, &r.Agent, &r.SubjectKind, &r.Subject,
		&r.Chat.Platform, &r.Chat.ChatID, &r.Chat.ThreadID, &r.Status, &r.DecidedBy, &r.CreatedAt,
		&r.Quorum, &r.Approvers, &r.SelfApprove, &votes)
	if err != nil {
		return r, err
	}
	r.Approvers = nilIfEmpty(r.Approvers)
	r.Votes, err = decodeVotes(votes)
	return r, err
}

// GrantsFor implements access.GrantStore: the grants of server for the agent
// and (when not empty) the person. Transient errors are retried.
func (db *DB) GrantsFor(ctx context.Context, server, agent, user string) ([]access.Grant, error) {
	out, err := retryValue(ctx, func(ctx context.Context) ([]access.Grant, error) {
		rows, err := db.pool.Query(ctx, `SELECT server, subject_kind, subject, allow, deny, granted_by FROM tool_grants
			WHERE server = $1 AND ((subject_kind = 'agent' AND subject = $2) OR (subject_kind = 'user' AND subject = $3 AND $3 <> ''))`,
			storable(server), storable(agent), storable(user))
		if err != nil {
			return nil, err
		}
		return pgx.CollectRows(rows, func(row pgx.CollectableRow) (access.Grant, error) {
			var g access.Grant
			err := row.Scan(&g.Server, &g.SubjectKind, &g.Subject, &g.Allow, &g.Deny, &g.GrantedBy)
			return g, err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("grants of mcp:%s: %w", server, err)
	}
	return out, nil
}

// OpenGrantRequest implements access.GrantStore, audited.
func (db *DB) OpenGrantRequest(ctx context.Context, r access.GrantRequest, cooldown time.Duration) (access.GrantRequest, bool, error) {
	if r.ID == "" || r.Server == "" || r.Tool == "" || r.Subject == "" {
		return r, false, errors.New("open grant request: id, server, tool and subject are required")
	}
	var (
		out     access.GrantRequest
		created bool
	)
	err := withRetry(ctx, func(ctx context.Context) error {
		created = false
		return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
			existing, err := scanGrantRequest(tx.QueryRow(ctx, `SELECT `+grantRequestCols+` FROM grant_requests
				WHERE server = $1 AND tool = $2 AND subject_kind = $3 AND subject = $4
				  AND (status = 'pending' OR (status = 'denied' AND decided_at > now() - $5::float8 * interval '1 microsecond'))
				ORDER BY status = 'pending' DESC, decided_at DESC LIMIT 1`,
				storable(r.Server), storable(r.Tool), r.SubjectKind, storable(r.Subject), float64(cooldown.Microseconds())))
			if err == nil {
				out = existing
				return nil
			}
			if !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
			out, err = scanGrantRequest(tx.QueryRow(ctx, `INSERT INTO grant_requests
					(id, server, tool, agent, subject_kind, subject, platform, chat_id, thread_id, quorum, approvers, self_approve)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
				ON CONFLICT (server, tool, subject_kind, subject) WHERE status = 'pending' DO NOTHING
				RETURNING `+grantRequestCols,
				storable(r.ID), storable(r.Server), storable(r.Tool), storable(r.Agent), r.SubjectKind, storable(r.Subject),
				storable(r.Chat.Platform), storable(r.Chat.ChatID), storable(r.Chat.ThreadID),
				max(r.Quorum, 1), storableList(r.Approvers), r.SelfApprove))
			if errors.Is(err, pgx.ErrNoRows) { // a concurrent open won; it has committed by now
				out, err = scanGrantRequest(tx.QueryRow(ctx, `SELECT `+grantRequestCols+` FROM grant_requests
					WHERE server = $1 AND tool = $2 AND subject_kind = $3 AND subject = $4 AND status = 'pending'`,
					storable(r.Server), storable(r.Tool), r.SubjectKind, storable(r.Subject)))
				return err
			}
			if err != nil {
				return err
			}
			created = true
			return writeAudit(ctx, tx, AuditEntry{Actor: "agent:" + r.Agent, Action: "grant.requested",
				SubjectKind: access.KindGrantRequest, SubjectID: out.ID,
				Detail: map[string]any{"server": r.Server, "tool": r.Tool, "subject": r.Subject, "subject_kind": r.SubjectKind}})
		})
	})
	if err != nil {
		return access.GrantRequest{}, false, fmt.Errorf("open grant request: %w", err)
	}
	return out, created, nil
}

// DecideGrantRequest decides pending request id once, by a trusted caller
// (tests, tools), whatever its quorum; approving adds the tool to the
// subject's grant in the same transaction. changed is false when it was
// decided before.
func (db *DB) DecideGrantRequest(ctx context.Context, id, status, by string) (access.GrantRequest, bool, error) {
	if status != access.StatusApproved && status != access.StatusDenied {
		return access.GrantRequest{}, false, fmt.Errorf("decide grant request %s: %q is not a decision", id, status)
	}
	get := func(ctx context.Context) (access.GrantRequest, error) { return db.getGrantRequest(ctx, id) }
	r, decided, err := decideRetried(ctx, db,
		func(tx pgx.Tx) (access.GrantRequest, error) {
			return scanGrantRequest(tx.QueryRow(ctx, `UPDATE grant_requests
					SET status = $2, decided_by = $3, decided_at = now()
					WHERE id = $1 AND status = 'pending' RETURNING `+grantRequestCols, id, status, storable(by)))
		},
		func(tx pgx.Tx, r access.GrantRequest) error { return grantDecided(ctx, tx, r, by, nil) }, get)
	if err != nil {
		return access.GrantRequest{}, false, fmt.Errorf("decide grant request %s: %w", id, err)
	}
	return r, decided, nil
}

// grantDecided is what deciding request r does inside the decision's
// transaction: approving adds the tool to the subject's grant, and the
// decision is audited.
func grantDecided(ctx context.Context, tx pgx.Tx, r access.GrantRequest, by string, detail map[string]any) error {
	if r.Status == access.StatusApproved {
		// Add the tool to the grant; a grant that allows every tool (empty
		// allow) stays so; a deny of it is lifted.
		if _, err := tx.Exec(ctx, `INSERT INTO tool_grants (server, subject_kind, subject, allow, granted_by)
				VALUES ($1, $2, $3, ARRAY[$4::text], $5)
				ON CONFLICT (server, subject_kind, subject) DO UPDATE SET
					allow = CASE WHEN cardinality(tool_grants.allow) = 0 OR $4 = ANY(tool_grants.allow)
					             THEN tool_grants.allow ELSE tool_grants.allow || $4::text END,
					deny = array_remove(tool_grants.deny, $4::text),
					granted_by = $5, updated_at = now()`,
			r.Server, r.SubjectKind, r.Subject, r.Tool, storable(by)); err != nil {
			return err
		}
	}
	d := map[string]any{"status": r.Status, "server": r.Server, "tool": r.Tool, "subject": r.Subject}
	for k, v := range detail {
		d[k] = v
	}
	return writeAudit(ctx, tx, AuditEntry{Actor: by, Action: "grant.decided",
		SubjectKind: access.KindGrantRequest, SubjectID: r.ID, Detail: d})
}

// ListGrants lists every grant, by server and subject.
func (db *DB) ListGrants(ctx context.Context) ([]access.Grant, error) {
	return retryValue(ctx, func(ctx context.Context) ([]access.Grant, error) {
		rows, err := db.pool.Query(ctx, `SELECT server, subject_kind, subject, allow, deny, granted_by FROM tool_grants
			ORDER BY server, subject_kind, subject`)
		if err != nil {
			return nil, err
		}
		return pgx.CollectRows(rows, func(row pgx.CollectableRow) (access.Grant, error) {
			var g access.Grant
			err := row.Scan(&g.Server, &g.SubjectKind, &g.Subject, &g.Allow, &g.Deny, &g.GrantedBy)
			return g, err
		})
	})
}

// PutGrant creates or replaces the grant of g's server and subject, audited.
func (db *DB) PutGrant(ctx context.Context, g access.Grant) error {
	if g.Server == "" || g.Subject == "" || (g.SubjectKind != access.GrantAgent && g.SubjectKind != access.GrantUser) {
		return fmt.Errorf("a grant needs server, subject_kind (agent or user) and subject")
	}
	if g.Allow == nil {
		g.Allow = []string{}
	}
	if g.Deny == nil {
		g.Deny = []string{}
	}
	return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO tool_grants (server, subject_kind, subject, allow, deny, granted_by)
			VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (server, subject_kind, subject) DO UPDATE SET allow = $4, deny = $5, granted_by = $6, updated_at = now()`,
			storable(g.Server), g.SubjectKind, storable(g.Subject), g.Allow, g.Deny, storable(g.GrantedBy)); err != nil {
			return err
		}
		return writeAudit(ctx, tx, AuditEntry{Actor: g.GrantedBy, Action: "grant.put", SubjectKind: "grant",
			SubjectID: g.Server + "/" + g.SubjectKind + ":" + g.Subject, Detail: map[string]any{"allow": g.Allow, "deny": g.Deny}})
	})
}

// DeleteGrant removes a grant, audited; it reports whether there was one.
func (db *DB) DeleteGrant(ctx context.Context, server, kind, subject, by string) (bool, error) {
	var found bool
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM tool_grants WHERE server = $1 AND subject_kind = $2 AND subject = $3`, server, kind, subject)
		if err != nil {
			return err
		}
		if found = tag.RowsAffected() > 0; !found {
			return nil
		}
		return writeAudit(ctx, tx, AuditEntry{Actor: by, Action: "grant.deleted", SubjectKind: "grant",
			SubjectID: server + "/" + kind + ":" + subject})
	})
	return found, err
}
