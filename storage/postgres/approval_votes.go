package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/approvals"
)

// Audit actions of quorum approvals.
const (
	ActionApprovalVoted     = "approval.voted"
	ActionApprovalEscalated = "approval.escalated"
)

// votesCol reads an approval's votes, oldest first, as one JSON array; it
// names the approvals table, so it works in SELECT, INSERT … RETURNING and
// UPDATE … RETURNING on it alike.
const votesCol = `coalesce((SELECT json_agg(json_build_object('person', v.person, 'identity', v.identity,
		'choice', v.choice, 'at', v.at) ORDER BY v.at, v.person)
	FROM approval_votes v WHERE v.approval_id = approvals.id), '[]'::json)`

// maxEscalations bounds one DueEscalations call.
const maxEscalations = 200

// VoteApproval records v on pending approval id and decides it when v is
// a deny or the quorum's last allow, in one transaction that locks the
// approval row first: concurrent votes on one approval run one after the
// other, so exactly one of them sees the quorum reached and makes the
// transition, and an expiry or cancellation waits for it too. A vote
// after the approval's time is up records nothing (VoteLate). A person
// votes once (VoteRepeated for the second). An unknown id gives an error
// wrapping bot.ErrNotFound.
func (db *DB) VoteApproval(ctx context.Context, id string, v approvals.Vote) (approvals.Approval, approvals.VoteOutcome, error) {
	switch {
	case v.Choice != approvals.StatusAllowedOnce && v.Choice != approvals.StatusAllowedAlways && v.Choice != approvals.StatusDenied:
		return approvals.Approval{}, 0, fmt.Errorf("vote on approval %s: %q is not a choice; use allowed_once, allowed_always or denied", id, v.Choice)
	case v.Person == "" || v.Identity == "":
		return approvals.Approval{}, 0, fmt.Errorf("vote on approval %s: say who votes (person and identity)", id)
	}
	type result struct {
		a       approvals.Approval
		outcome approvals.VoteOutcome
	}
	r, err := retryValue(ctx, func(ctx context.Context) (result, error) {
		var r result
		err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
			var err error
			r.outcome, err = vote(ctx, tx, id, v)
			if err != nil {
				return err
			}
			r.a, err = scanApproval(tx.QueryRow(ctx, `SELECT `+approvalCols+` FROM approvals WHERE id = $1`, id))
			return err
		})
		return r, err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return approvals.Approval{}, 0, fmt.Errorf("approval %s: %w", id, bot.ErrNotFound)
	}
	if err != nil {
		return approvals.Approval{}, 0, fmt.Errorf("vote on approval %s: %w", id, err)
	}
	return r.a, r.outcome, nil
}

// vote is VoteApproval's transaction body, up to reading the approval back.
func vote(ctx context.Context, tx pgx.Tx, id string, v approvals.Vote) (approvals.VoteOutcome, error) {
	var (
		status string
		quorum int
		late   bool
	)
	err := tx.QueryRow(ctx, `SELECT status, quorum, expires_at <= now() FROM approvals WHERE id = $1 FOR UPDATE`, id).
		Scan(&status, &quorum, &late)
	switch {
	case err != nil:
		return 0, err
	case status != approvals.StatusPending:
		return approvals.VoteClosed, nil
	case late:
		return approvals.VoteLate, nil
	}
	tag, err := tx.Exec(ctx, `INSERT INTO approval_votes (approval_id, person, identity, choice) VALUES ($1, $2, $3, $4)
		ON CONFLICT (approval_id, person) DO NOTHING`, id, storable(v.Person), storable(v.Identity), v.Choice)
	if err != nil {
		return 0, err
	}
	if tag.RowsAffected() == 0 {
		return approvals.VoteRepeated, nil
	}
	if err := writeAudit(ctx, tx, AuditEntry{Actor: v.Identity, Action: ActionApprovalVoted,
		SubjectKind: approvals.Kind, SubjectID: id, Detail: map[string]any{"choice": v.Choice, "person": v.Person}}); err != nil {
		return 0, err
	}
	decision, by := approvals.StatusDenied, v.Identity
	if v.Choice != approvals.StatusDenied {
		var (
			allows    int
			allAlways bool
		)
		if err := tx.QueryRow(ctx, `SELECT count(*), coalesce(bool_and(choice = 'allowed_always'), false),
				coalesce(string_agg(identity, ', ' ORDER BY at, person), '')
			FROM approval_votes WHERE approval_id = $1 AND choice <> 'denied'`, id).Scan(&allows, &allAlways, &by); err != nil {
			return 0, err
		}
		if allows < quorum {
			return approvals.VoteCounted, nil
		}
		decision = approvals.StatusAllowedOnce
		if allAlways {
			decision = approvals.StatusAllowedAlways
		}
	}
	if _, err := tx.Exec(ctx, `UPDATE approvals SET status = $2, decided_by = $3, decided_at = now() WHERE id = $1`,
		id, decision, storable(by)); err != nil {
		return 0, err
	}
	return approvals.VoteDecided, writeAudit(ctx, tx, AuditEntry{Actor: by, Action: ActionApprovalDecided,
		SubjectKind: approvals.Kind, SubjectID: id, Detail: map[string]any{"status": decision, "quorum": quorum}})
}

// DueEscalations lists pending, unexpired approvals whose escalation time
// has passed and that were not escalated yet, oldest first, at most 200.
func (db *DB) DueEscalations(ctx context.Context) ([]approvals.Approval, error) {
	return retryValue(ctx, func(ctx context.Context) ([]approvals.Approval, error) {
		rows, err := db.pool.Query(ctx, `SELECT `+approvalCols+` FROM approvals
			WHERE status = 'pending' AND escalated_at IS NULL AND escalate_at IS NOT NULL
			  AND escalate_at <= now() AND expires_at > now()
			ORDER BY escalate_at, id LIMIT $1`, maxEscalations)
		if err != nil {
			return nil, fmt.Errorf("list due escalations: %w", err)
		}
		return collectApprovals(rows)
	})
}

// MarkEscalated records, with its audit record, that pending approval id
// was escalated, and reports whether this call did: of replicas escalating
// the same approval at once exactly one gets true.
func (db *DB) MarkEscalated(ctx context.Context, id string) (approvals.Approval, bool, error) {
	a, marked, err := decideRetried(ctx, db,
		func(tx pgx.Tx) (approvals.Approval, error) {
			return scanApproval(tx.QueryRow(ctx, `UPDATE approvals SET escalated_at = now()
				WHERE id = $1 AND status = 'pending' AND escalated_at IS NULL AND escalate_at IS NOT NULL
				RETURNING `+approvalCols, id))
		},
		func(tx pgx.Tx, a approvals.Approval) error {
			return writeAudit(ctx, tx, AuditEntry{Actor: "system", Action: ActionApprovalEscalated,
				SubjectKind: approvals.Kind, SubjectID: id, Detail: map[string]any{"to": a.EscalateTo}})
		},
		func(ctx context.Context) (approvals.Approval, error) { return db.getApproval(ctx, id) })
	if err != nil {
		return approvals.Approval{}, false, fmt.Errorf("escalate approval %s: %w", id, err)
	}
	return a, marked, nil
}

// decodeVotes reads votesCol.
func decodeVotes(raw []byte) ([]approvals.Vote, error) {
	var rows []struct {
		Person   string    `json:"person"`
		Identity string    `json:"identity"`
		Choice   string    `json:"choice"`
		At       time.Time `json:"at"`
	}
	if err := json.Unmarshal(raw, &rows); err != nil {
		return nil, fmt.Errorf("decode approval votes: %w", err)
	}
	var out []approvals.Vote
	for _, r := range rows {
		out = append(out, approvals.Vote{Person: r.Person, Identity: r.Identity, Choice: r.Choice, At: r.At})
	}
	return out, nil
}

// nilIfEmpty returns nil for an empty list, so a stored empty array reads
// back as a Go nil slice.
func nilIfEmpty(list []string) []string {
	if len(list) == 0 {
		return nil
	}
	return list
}
