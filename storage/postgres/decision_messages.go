package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/bot"
)

var _ bot.DecisionMessages = (*DB)(nil)

// AddDecisionMessage remembers that outbox message outboxID was posted about
// subject subjectID of kind (approvals.Kind or access.KindRequest) in
// role ("approver" or "requester"). Adding it again changes nothing, so
// transient errors are retried.
func (db *DB) AddDecisionMessage(ctx context.Context, kind, subjectID string, outboxID int64, role string) error {
	if kind == "" || subjectID == "" {
		return fmt.Errorf("add decision message %d: kind %q and subject id must not be empty", outboxID, kind)
	}
	err := withRetry(ctx, func(ctx context.Context) error {
		_, err := db.pool.Exec(ctx, `INSERT INTO decision_messages (kind, subject_id, outbox_id, role)
			VALUES ($1, $2, $3, $4)
			ON CONFLICT (kind, subject_id, outbox_id) DO NOTHING`,
			storable(kind), storable(subjectID), outboxID, storable(role))
		return err
	})
	if err != nil {
		return fmt.Errorf("add decision message %d for %s %s: %w", outboxID, kind, subjectID, err)
	}
	return nil
}

// DecisionMessagesOf lists the messages posted about subject subjectID of
// kind, in the order they were enqueued, each with its destination and the
// platform message id recorded on delivery (empty until delivered).
// Transient errors are retried.
func (db *DB) DecisionMessagesOf(ctx context.Context, kind, subjectID string) ([]bot.DecisionMessage, error) {
	list, err := retryValue(ctx, func(ctx context.Context) ([]bot.DecisionMessage, error) {
		rows, err := db.pool.Query(ctx, `SELECT d.outbox_id, d.role, o.platform, o.chat_id, o.thread_id,
				coalesce(o.platform_message_id, '')
			FROM decision_messages d
			JOIN outbox o ON o.id = d.outbox_id
			WHERE d.kind = $1 AND d.subject_id = $2
			ORDER BY d.outbox_id`, kind, subjectID)
		if err != nil {
			return nil, err
		}
		return pgx.CollectRows(rows, func(row pgx.CollectableRow) (bot.DecisionMessage, error) {
			var m bot.DecisionMessage
			err := row.Scan(&m.OutboxID, &m.Role, &m.To.Platform, &m.To.ChatID, &m.To.ThreadID, &m.PlatformMessageID)
			return m, err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list decision messages of %s %s: %w", kind, subjectID, err)
	}
	return list, nil
}
