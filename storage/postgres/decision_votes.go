package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/bot/quorum"
)

// votesOf is a column expression reading the votes of kind on the row
// whose id is idCol, oldest first, as one JSON array. It names the
// request's table, so it works in SELECT, INSERT … RETURNING and UPDATE …
// RETURNING on it alike. kind is one of this package's constants, never
// input.
func votesOf(kind, idCol string) string {
	return `coalesce((SELECT json_agg(json_build_object('person', v.person, 'identity', v.identity,
		'choice', v.choice, 'at', v.at) ORDER BY v.at, v.person)
	FROM decision_votes v WHERE v.kind = '` + kind + `' AND v.subject_id = ` + idCol + `), '[]'::json)`
}

// castVote records v on the request of kind with id, inside tx, with its
// audit record (action), and reports whether it was recorded: false when
// this person voted on it before. The caller has locked the request row.
func castVote(ctx context.Context, tx pgx.Tx, kind, id, action string, v quorum.Vote) (bool, error) {
	tag, err := tx.Exec(ctx, `INSERT INTO decision_votes (kind, subject_id, person, identity, choice) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (kind, subject_id, person) DO NOTHING`, kind, id, storable(v.Person), storable(v.Identity), v.Choice)
	if err != nil {
		return false, err
	}
	if tag.RowsAffected() == 0 {
		return false, nil
	}
	return true, writeAudit(ctx, tx, AuditEntry{Actor: v.Identity, Action: action,
		SubjectKind: kind, SubjectID: id, Detail: map[string]any{"choice": v.Choice, "person": v.Person}})
}

// tally is what the allowing votes on a request come to.
type tally struct {
	allows int
	// unanimous: every allowing vote chose choice (tallyVotes' argument).
	unanimous bool
	// by names the allowing voters, oldest first ("telegram:1, slack:U2").
	by string
}

// tallyVotes counts the allowing votes on the request of kind with id,
// inside tx; unanimous says whether they all chose choice.
func tallyVotes(ctx context.Context, tx pgx.Tx, kind, id, choice string) (tally, error) {
	var t tally
	err := tx.QueryRow(ctx, `SELECT count(*), coalesce(bool_and(choice = $3), false),
			coalesce(string_agg(identity, ', ' ORDER BY at, person), '')
		FROM decision_votes WHERE kind = $1 AND subject_id = $2 AND choice <> 'denied'`, kind, id, choice).
		Scan(&t.allows, &t.unanimous, &t.by)
	return t, err
}

// decodeVotes reads a votesOf column.
func decodeVotes(raw []byte) ([]quorum.Vote, error) {
	var rows []struct {
		Person   string    `json:"person"`
		Identity string    `json:"identity"`
		Choice   string    `json:"choice"`
		At       time.Time `json:"at"`
	}
	if err := json.Unmarshal(raw, &rows); err != nil {
		return nil, fmt.Errorf("decode votes: %w", err)
	}
	var out []quorum.Vote
	for _, r := range rows {
		out = append(out, quorum.Vote{Person: r.Person, Identity: r.Identity, Choice: r.Choice, At: r.At})
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
