package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/askuser"
)

var _ askuser.Store = (*DB)(nil)

// maxDueQuestions bounds one DueQuestions or PendingQuestionsOf call.
const maxDueQuestions = 200

// questionCols are the columns scanQuestion reads, in order.
const questionCols = `id, session_key, tool_call_id, agent, asker, platform, chat_id, thread_id, question,
	options, status, answer, answered_by, answer_kind, coalesce(answer_external_id, ''), created_at, expires_at, answered_at`

// CreateQuestion stores q as pending (q.Status is ignored) unless a
// question for the same (Session, ToolCallID) exists: then it returns that
// one with created=false. ID, Session, ToolCallID, Asker and ExpiresAt
// must be set; a zero CreatedAt means now.
func (db *DB) CreateQuestion(ctx context.Context, q askuser.Question) (askuser.Question, bool, error) {
	switch {
	case q.ID == "":
		return q, false, errors.New("create question: empty id; set a random unguessable id")
	case q.Session == "" || q.ToolCallID == "":
		return q, false, fmt.Errorf("create question %s: it needs its session and tool call id", q.ID)
	case q.Asker == "":
		return q, false, fmt.Errorf("create question %s: say whom it asks", q.ID)
	case q.ExpiresAt.IsZero():
		return q, false, fmt.Errorf("create question %s: no expiry time; set ExpiresAt", q.ID)
	}
	var createdAt *time.Time
	if !q.CreatedAt.IsZero() {
		createdAt = &q.CreatedAt
	}
	type result struct {
		q       askuser.Question
		created bool
	}
	r, err := retryValue(ctx, func(ctx context.Context) (result, error) {
		stored, err := scanQuestion(db.pool.QueryRow(ctx, `INSERT INTO questions
				(id, session_key, tool_call_id, agent, asker, platform, chat_id, thread_id, question, options,
				 created_at, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, coalesce($11::timestamptz, now()), $12)
			ON CONFLICT (session_key, tool_call_id) DO NOTHING
			RETURNING `+questionCols,
			storable(q.ID), storable(q.Session), storable(q.ToolCallID), storable(q.Agent), storable(q.Asker),
			storable(q.Chat.Platform), storable(q.Chat.ChatID), storable(q.Chat.ThreadID), storable(q.Text),
			storableList(q.Options), createdAt, q.ExpiresAt))
		if errors.Is(err, pgx.ErrNoRows) {
			// The call asked before; the conflicting insert has committed,
			// so a fresh statement sees it. It is this one when a try whose
			// answer was lost stored it.
			stored, err = db.questionOfCall(ctx, q.Session, q.ToolCallID)
			return result{stored, err == nil && stored.ID == storable(q.ID)}, err
		}
		return result{stored, err == nil}, err
	})
	if err != nil {
		return askuser.Question{}, false, fmt.Errorf("create question %s: %w", q.ID, err)
	}
	return r.q, r.created, nil
}

// QuestionOfCall returns the question of (session, toolCallID), or an
// error wrapping bot.ErrNotFound.
func (db *DB) QuestionOfCall(ctx context.Context, session, toolCallID string) (askuser.Question, error) {
	return retryValue(ctx, func(ctx context.Context) (askuser.Question, error) {
		return db.questionOfCall(ctx, session, toolCallID)
	})
}

// questionOfCall is QuestionOfCall without retries.
func (db *DB) questionOfCall(ctx context.Context, session, toolCallID string) (askuser.Question, error) {
	q, err := scanQuestion(db.pool.QueryRow(ctx, `SELECT `+questionCols+` FROM questions
		WHERE session_key = $1 AND tool_call_id = $2`, storable(session), storable(toolCallID)))
	if errors.Is(err, pgx.ErrNoRows) {
		return q, fmt.Errorf("question of call %s in %s: %w", toolCallID, session, bot.ErrNotFound)
	}
	return q, err
}

// GetQuestion returns question id, or an error wrapping bot.ErrNotFound.
func (db *DB) GetQuestion(ctx context.Context, id string) (askuser.Question, error) {
	return retryValue(ctx, func(ctx context.Context) (askuser.Question, error) { return db.getQuestion(ctx, id) })
}

// getQuestion is GetQuestion without retries.
func (db *DB) getQuestion(ctx context.Context, id string) (askuser.Question, error) {
	return getByID(ctx, db, "question", `SELECT `+questionCols+` FROM questions WHERE id = $1`, id, scanQuestion)
}

// DecideQuestion moves pending question id to o.Status in one UPDATE, so
// of concurrent answers (a press and a typed answer, two replicas) exactly
// one wins. An answer loses once the question's time is up: it is
// returned still pending with false, for the caller to expire. It returns
// the question as it is afterwards and whether this call changed it; an
// unknown id gives an error wrapping bot.ErrNotFound.
func (db *DB) DecideQuestion(ctx context.Context, id string, o askuser.Outcome) (askuser.Question, bool, error) {
	switch {
	case o.Status != askuser.StatusAnswered && o.Status != askuser.StatusExpired && o.Status != askuser.StatusCancelled:
		return askuser.Question{}, false, fmt.Errorf("decide question %s: %q is not an outcome; use answered, expired or cancelled", id, o.Status)
	case o.By == "":
		return askuser.Question{}, false, fmt.Errorf("decide question %s: say who answered", id)
	case o.Status == askuser.StatusAnswered && o.How != askuser.ByPress && o.How != askuser.ByText:
		return askuser.Question{}, false, fmt.Errorf("decide question %s: an answer is pressed or typed, not %q", id, o.How)
	}
	if o.Status != askuser.StatusAnswered {
		o.Answer, o.How, o.ExternalID = "", "", ""
	}
	q, changed, err := decideRetried(ctx, db,
		func(tx pgx.Tx) (askuser.Question, error) {
			return scanQuestion(tx.QueryRow(ctx, `UPDATE questions
				SET status = $2, answer = $3, answered_by = $4, answer_kind = $5, answer_external_id = $6, answered_at = now()
				WHERE id = $1 AND status = 'pending' AND ($2 <> 'answered' OR expires_at > now())
				RETURNING `+questionCols, id, o.Status, storable(o.Answer), storable(o.By), o.How, nullIfEmpty(storable(o.ExternalID))))
		},
		// answered_at is what recovery's quick looks go by: should this
		// replica die before it resumes the run, another finds the session
		// within seconds.
		func(pgx.Tx, askuser.Question) error { return nil },
		func(ctx context.Context) (askuser.Question, error) { return db.getQuestion(ctx, id) })
	if err != nil {
		return askuser.Question{}, false, fmt.Errorf("decide question %s: %w", id, err)
	}
	return q, changed, nil
}

// AnswerTarget returns the question of session that a message from
// identity with externalID answers: the one pending for identity (the
// oldest, should there be several), or the one that message answered
// before. One query, on the pending index and the answer-message index.
func (db *DB) AnswerTarget(ctx context.Context, session, identity, externalID string) (askuser.Question, bool, error) {
	type found struct {
		q  askuser.Question
		ok bool
	}
	f, err := retryValue(ctx, func(ctx context.Context) (found, error) {
		q, err := scanQuestion(db.pool.QueryRow(ctx, `SELECT `+questionCols+` FROM questions
			WHERE session_key = $1 AND ((status = 'pending' AND asker = $2) OR answer_external_id = $3)
			ORDER BY status = 'pending', created_at LIMIT 1`,
			storable(session), storable(identity), nullIfEmpty(storable(externalID))))
		if errors.Is(err, pgx.ErrNoRows) {
			return found{}, nil
		}
		return found{q, err == nil}, err
	})
	if err != nil {
		return askuser.Question{}, false, fmt.Errorf("find the question %s answers in %s: %w", identity, session, err)
	}
	return f.q, f.ok, nil
}

// PendingQuestionsOf lists session's pending questions, oldest first, at
// most 200.
func (db *DB) PendingQuestionsOf(ctx context.Context, session string) ([]askuser.Question, error) {
	list, err := retryValue(ctx, func(ctx context.Context) ([]askuser.Question, error) {
		rows, err := db.pool.Query(ctx, `SELECT `+questionCols+` FROM questions
			WHERE session_key = $1 AND status = 'pending' ORDER BY created_at, id LIMIT $2`,
			storable(session), maxDueQuestions)
		if err != nil {
			return nil, err
		}
		return collectQuestions(rows)
	})
	if err != nil {
		return nil, fmt.Errorf("list pending questions of %s: %w", session, err)
	}
	return list, nil
}

// DueQuestions lists pending questions whose time is up, oldest first, at
// most 200, and when the next pending one expires (zero: none pending; a
// time already past: more are due than were listed). One round trip.
func (db *DB) DueQuestions(ctx context.Context) ([]askuser.Question, time.Time, error) {
	list, next, err := listDue(ctx, db, `SELECT `+questionCols+` FROM questions
			WHERE status = 'pending' AND expires_at <= now() ORDER BY expires_at, id LIMIT $1`,
		`SELECT min(expires_at) FROM questions WHERE status = 'pending' AND expires_at > now()`,
		maxDueQuestions, collectQuestions, func(q askuser.Question) time.Time { return q.ExpiresAt })
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("list due questions: %w", err)
	}
	return list, next, nil
}

// collectQuestions reads every row of questionCols.
func collectQuestions(rows pgx.Rows) ([]askuser.Question, error) {
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (askuser.Question, error) { return scanQuestion(row) })
}

// scanQuestion reads one row of questionCols.
func scanQuestion(row pgx.Row) (askuser.Question, error) {
	var (
		q          askuser.Question
		answeredAt *time.Time
	)
	err := row.Scan(&q.ID, &q.Session, &q.ToolCallID, &q.Agent, &q.Asker, &q.Chat.Platform, &q.Chat.ChatID, &q.Chat.ThreadID,
		&q.Text, &q.Options, &q.Status, &q.Answer, &q.AnsweredBy, &q.How, &q.AnswerExternalID, &q.CreatedAt, &q.ExpiresAt, &answeredAt)
	if answeredAt != nil {
		q.AnsweredAt = *answeredAt
	}
	q.Options = nilIfEmpty(q.Options)
	return q, err
}
