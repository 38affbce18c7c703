package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot"
)

var _ bot.WindowAppender = (*DB)(nil)

// windowCols are the columns collectMessages reads.
const windowCols = `role, content, tool_calls, tool_call_id, tool_name, is_error, coalesce(external_id, ''), seq`

// appendWindowSQL is appendSQL that also returns the session's newest
// messages: up to $12 - 1 stored before (all when $12 is 0) and the one it
// stores, oldest first. The earlier ones are read from the statement's
// snapshot, which misses an append that committed while this one waited for
// the session row: AppendWindow checks the seqs for that gap.
var appendWindowSQL = appendWith(`RETURNING `+windowCols) + `
	SELECT * FROM (
		SELECT ` + windowCols + ` FROM messages
		WHERE session_key = $1
		ORDER BY seq DESC
		LIMIT CASE WHEN $12::int > 0 THEN $12::int - 1 END
	) earlier
	UNION ALL SELECT * FROM ins
	ORDER BY 8`

// AppendWindow appends m to session as Append does and returns its seq and
// the session's newest limit messages (0: all) ending with m, in one
// statement, whose commit is shared with the appends made at the same time
// (groupCommit). window is nil when it could not be read consistently
// (another append committed meanwhile); read it with Load then.
func (db *DB) AppendWindow(ctx context.Context, session string, limit int, m agentcore.Message) (int64, []agentcore.Message, error) {
	b, err := newBatch(session, []agentcore.Message{m})
	if err != nil {
		return 0, nil, err
	}
	args := append(b.args(), limit)
	var window []agentcore.Message
	err = db.appends.run(ctx, db.pool, session, func(q *pgx.Batch) {
		q.Queue(appendWindowSQL, args...).Query(func(rows pgx.Rows) (err error) {
			window, err = collectMessages(rows, limit)
			return err
		})
	})
	if err != nil {
		// The group failed, maybe for another's message: alone.
		window, err = retryValue(ctx, func(ctx context.Context) ([]agentcore.Message, error) {
			rows, err := db.pool.Query(ctx, appendWindowSQL, args...)
			if err != nil {
				return nil, err
			}
			return collectMessages(rows, limit)
		})
	}
	if err != nil {
		return 0, nil, appendError(session, err)
	}
	if len(window) == 0 {
		return 0, nil, fmt.Errorf("append to session %s: no row back", session)
	}
	seq := window[len(window)-1].Seq
	for i := range window {
		if window[i].Seq != seq-int64(len(window)-1-i) {
			return seq, nil, nil // a gap: someone appended meanwhile
		}
	}
	if (limit == 0 || len(window) < limit) && window[0].Seq != 1 {
		return seq, nil, nil // fewer than asked for, yet not from the start
	}
	return seq, window, nil
}
