package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/approvals"
)

// Audit actions of quorum approvals.
const (
	ActionApprovalVoted     = "approval.voted"
	ActionApprovalEscalated = "approval.escalated"
)

// votesCol reads an approval's votes (votesOf).
var votesCol = votesOf(approvals.Kind, "approvals.id")

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
	recorded, err := castVote(ctx, tx, approvals.Kind, id, ActionApprovalVoted, v)
	if err != nil || !recorded {
		return approvals.VoteRepeated, err
	}
	decision, by := approvals.StatusDenied, v.Identity
	if v.Choice != approvals.StatusDenied {
		t, err := tallyVotes(ctx, tx, approvals.Kind, id, approvals.StatusAllowedAlways)
		if err != nil {
			return 0, err
		}
		if t.allows < quorum {
			return approvals.VoteCounted, nil
		}
		decision, by = approvals.StatusAllowedOnce, t.by
		if t.unanimous {
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
