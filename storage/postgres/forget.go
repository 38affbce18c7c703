package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/bot/retention"
)

// ActionChatForgotten is the audit action of a /forget.
const ActionChatForgotten = "chat.forgotten"

// chatMediaSQL lists the attachments of chat $2 — those linked to it
// (media_chats: every file sent in it or made for it) and the pictures the
// messages of its sessions $1 show — that no other chat links and no other
// session's message shows: the same bytes sent in two chats are one row,
// which forgetting one chat must not take from the other.
const chatMediaSQL = `SELECT sha FROM (
		SELECT img->>'sha256' AS sha FROM messages m, jsonb_array_elements(m.images) img
		WHERE m.session_key = ANY($1) AND m.images IS NOT NULL
		UNION
		SELECT sha256 FROM media_chats WHERE chat = $2) mine
	WHERE NOT EXISTS (SELECT 1 FROM media_chats c WHERE c.sha256 = mine.sha AND c.chat <> $2)
	  AND NOT EXISTS (SELECT 1 FROM messages o, jsonb_array_elements(o.images) oi
	                  WHERE o.images IS NOT NULL AND o.session_key <> ALL($1) AND oi->>'sha256' = mine.sha)`

// forgetRepliesSQL deletes the copies of the replies delivered to chat
// ($1 platform, $2 chat id) that the outbox keeps for a while. Kept: those
// still to be sent, and those an approval's or access request's message
// is (its decision edits them; they show no conversation).
const forgetRepliesSQL = `DELETE FROM outbox o WHERE o.platform = $1 AND o.chat_id = $2 AND o.status <> 'pending'
	AND NOT EXISTS (SELECT 1 FROM decision_messages d WHERE d.outbox_id = o.id)`

// chatDocs matches the memory documents of the chat in parameter p and
// its threads (tools.ChatScope): "chat:<chat>" and "chat:<chat>:<thread>";
// left() rather than LIKE, so no character of a chat id is a wildcard.
func chatDocs(p string) string {
	return `(scope = 'chat:' || ` + p + ` OR left(scope, length(` + p + `) + 6) = 'chat:' || ` + p + ` || ':')`
}

// ChatFootprint implements retention.Store.
func (db *DB) ChatFootprint(ctx context.Context, chat string) (retention.Footprint, error) {
	var f retention.Footprint
	err := pgx.BeginTxFunc(ctx, db.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var err error
		f, _, _, err = chatFootprint(ctx, tx, chat)
		return err
	})
	if err != nil {
		return f, fmt.Errorf("count chat %s: %w", chat, err)
	}
	return f, nil
}

// ForgetChat implements retention.Store. The sessions themselves stay,
// with their last seq: a reply's outbox row is keyed by session and seq,
// and numbering a session's messages again from 1 would make new replies
// look like ones already sent.
func (db *DB) ForgetChat(ctx context.Context, chat, actor string) (retention.Footprint, []string, error) {
	var (
		f              retention.Footprint
		sessions, shas []string
	)
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var err error
		if f, sessions, shas, err = chatFootprint(ctx, tx, chat); err != nil {
			return err
		}
		for _, q := range []struct {
			sql string
			arg any
		}{
			{`DELETE FROM messages WHERE session_key = ANY($1)`, sessions},
			{`DELETE FROM session_resets WHERE session_key = ANY($1)`, sessions},
			{`DELETE FROM session_summaries WHERE session_key = ANY($1)`, sessions},
			{`DELETE FROM questions WHERE session_key = ANY($1)`, sessions},
			{`DELETE FROM agent_docs WHERE ` + chatDocs("$1"), storable(chat)},
			{`DELETE FROM media WHERE sha256 = ANY($1)`, shas},
			{`DELETE FROM media_chats WHERE chat = $1`, storable(chat)},
		} {
			if _, err := tx.Exec(ctx, q.sql, q.arg); err != nil {
				return err
			}
		}
		platform, chatID, _ := strings.Cut(chat, ":")
		tag, err := tx.Exec(ctx, forgetRepliesSQL, storable(platform), storable(chatID))
		if err != nil {
			return err
		}
		return writeAudit(ctx, tx, AuditEntry{Actor: actor, Action: ActionChatForgotten, SubjectKind: SubjectChat,
			SubjectID: chat, Detail: map[string]any{
				"sessions": f.Sessions, "messages": f.Messages, "memory": f.Memory, "attachments": f.Attachments,
				"replies": tag.RowsAffected(),
				"outcome": fmt.Sprintf("deleted %d messages, %d memory documents, %d attachments", f.Messages, f.Memory, f.Attachments),
			}})
	})
	if err != nil {
		return retention.Footprint{}, nil, fmt.Errorf("forget chat %s: %w", chat, err)
	}
	return f, sessions, nil
}

// chatFootprint counts what chat holds within tx and returns its sessions
// and the attachments only it shows.
func chatFootprint(ctx context.Context, tx pgx.Tx, chat string) (retention.Footprint, []string, []string, error) {
	var f retention.Footprint
	sessions, err := chatSessions(ctx, tx, chat)
	if err != nil {
		return f, nil, nil, err
	}
	rows, err := tx.Query(ctx, chatMediaSQL, sessions, storable(chat))
	if err != nil {
		return f, nil, nil, fmt.Errorf("list attachments: %w", err)
	}
	shas, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return f, nil, nil, fmt.Errorf("list attachments: %w", err)
	}
	err = tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM messages WHERE session_key = ANY($1)),
			(SELECT count(*) FROM agent_docs WHERE `+chatDocs("$2")+`)`, sessions, storable(chat)).Scan(&f.Messages, &f.Memory)
	if err != nil {
		return f, nil, nil, fmt.Errorf("count messages: %w", err)
	}
	f.Sessions, f.Attachments = len(sessions), len(shas)
	return f, sessions, shas, nil
}

// chatSessions returns the keys of chat's sessions (retention.ChatOf).
// The query only narrows the candidates to scopes naming the chat; the
// rule of which scope belongs to which chat is ChatOf's.
func chatSessions(ctx context.Context, tx pgx.Tx, chat string) ([]string, error) {
	rows, err := tx.Query(ctx, `SELECT key, scope FROM sessions WHERE strpos(scope, $1) > 0`, storable(chat))
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	keys := []string{}
	var key, scope string
	_, err = pgx.ForEachRow(rows, []any{&key, &scope}, func() error {
		if retention.ChatOf(scope) == chat {
			keys = append(keys, key)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return keys, nil
}
