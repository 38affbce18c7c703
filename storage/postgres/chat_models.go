package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// ActionModelSwitched is the audit action of a /model switch.
const ActionModelSwitched = "model.switched"

// SubjectChat is a chat; its SubjectID is platform:chat_id.
const SubjectChat = "chat"

// ChatModel returns the model name chat was switched to, "" when none.
func (db *DB) ChatModel(ctx context.Context, chat string) (string, error) {
	var name string
	err := db.pool.QueryRow(ctx, `SELECT model FROM chat_models WHERE chat = $1`, chat).Scan(&name)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read chat model: %w", err)
	}
	return name, nil
}

// SetChatModel switches chat to the model called name ("" back to the
// default), audited as done by actor, in one transaction.
func (db *DB) SetChatModel(ctx context.Context, chat, name, actor string) error {
	return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var err error
		if name == "" {
			_, err = tx.Exec(ctx, `DELETE FROM chat_models WHERE chat = $1`, chat)
		} else {
			_, err = tx.Exec(ctx, `INSERT INTO chat_models (chat, model, set_by) VALUES ($1, $2, $3)
				ON CONFLICT (chat) DO UPDATE SET model = EXCLUDED.model, set_by = EXCLUDED.set_by, set_at = now()`,
				chat, name, actor)
		}
		if err != nil {
			return fmt.Errorf("set chat model: %w", err)
		}
		model := name
		if model == "" {
			model = "default"
		}
		return writeAudit(ctx, tx, AuditEntry{Actor: actor, Action: ActionModelSwitched, SubjectKind: SubjectChat,
			SubjectID: chat, Detail: map[string]any{"model": model}})
	})
}
