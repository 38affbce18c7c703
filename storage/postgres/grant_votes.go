package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/access"
	"github.com/switchboard-chat/switchboard/bot/quorum"
)

// ActionGrantVoted audits a vote on a quorum grant request.
const ActionGrantVoted = "grant.voted"

// GetGrantRequest implements access.GrantStore. Transient errors are
// retried.
func (db *DB) GetGrantRequest(ctx context.Context, id string) (access.GrantRequest, error) {
	return retryValue(ctx, func(ctx context.Context) (access.GrantRequest, error) { return db.getGrantRequest(ctx, id) })
}

// getGrantRequest reads request id once.
func (db *DB) getGrantRequest(ctx context.Context, id string) (access.GrantRequest, error) {
	return getByID(ctx, db, "grant request", `SELECT `+grantRequestCols+` FROM grant_requests WHERE id = $1`, id, scanGrantRequest)
}

// VoteGrantRequest implements access.GrantStore: it records v on pending
// request id and decides it when v is a deny or the quorum's last
// approval, in one transaction that locks the request row first, so
// concurrent votes run one after the other and exactly one of them sees
// the quorum reached and grants. A person votes once (quorum.Repeated for
// the second); a decided request takes no vote (quorum.Closed). An
// unknown id gives an error wrapping bot.ErrNotFound.
func (db *DB) VoteGrantRequest(ctx context.Context, id string, v quorum.Vote) (access.GrantRequest, quorum.Outcome, error) {
	switch {
	case v.Choice != access.StatusApproved && v.Choice != access.StatusDenied:
		return access.GrantRequest{}, 0, fmt.Errorf("vote on grant request %s: %q is not a choice; use approved or denied", id, v.Choice)
	case v.Person == "" || v.Identity == "":
		return access.GrantRequest{}, 0, fmt.Errorf("vote on grant request %s: say who votes (person and identity)", id)
	}
	type result struct {
		r       access.GrantRequest
		outcome quorum.Outcome
	}
	res, err := retryValue(ctx, func(ctx context.Context) (result, error) {
		var res result
		err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
			var err error
			if res.outcome, err = voteGrant(ctx, tx, id, v); err != nil {
				return err
			}
			res.r, err = scanGrantRequest(tx.QueryRow(ctx, `SELECT `+grantRequestCols+` FROM grant_requests WHERE id = $1`, id))
			return err
		})
		return res, err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return access.GrantRequest{}, 0, fmt.Errorf("grant request %s: %w", id, bot.ErrNotFound)
	}
	if err != nil {
		return access.GrantRequest{}, 0, fmt.Errorf("vote on grant request %s: %w", id, err)
	}
	return res.r, res.outcome, nil
}

// voteGrant is VoteGrantRequest's transaction body, up to reading the
// request back.
func voteGrant(ctx context.Context, tx pgx.Tx, id string, v quorum.Vote) (quorum.Outcome, error) {
	r, err := scanGrantRequest(tx.QueryRow(ctx, `SELECT `+grantRequestCols+` FROM grant_requests WHERE id = $1 FOR UPDATE`, id))
	switch {
	case err != nil:
		return 0, err
	case r.Status != access.StatusPending:
		return quorum.Closed, nil
	}
	recorded, err := castVote(ctx, tx, access.KindGrantRequest, id, ActionGrantVoted, v)
	if err != nil || !recorded {
		return quorum.Repeated, err
	}
	r.Status, r.DecidedBy = access.StatusDenied, v.Identity
	if v.Choice != access.StatusDenied {
		t, err := tallyVotes(ctx, tx, access.KindGrantRequest, id, access.StatusApproved)
		if err != nil {
			return 0, err
		}
		if t.allows < r.Quorum {
			return quorum.Counted, nil
		}
		r.Status, r.DecidedBy = access.StatusApproved, t.by
	}
	if _, err := tx.Exec(ctx, `UPDATE grant_requests SET status = $2, decided_by = $3, decided_at = now() WHERE id = $1`,
		id, r.Status, storable(r.DecidedBy)); err != nil {
		return 0, err
	}
	return quorum.Decided, grantDecided(ctx, tx, r, r.DecidedBy, map[string]any{"quorum": r.Quorum})
}
