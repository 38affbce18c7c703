package retention

import (
	"context"
	"time"
)

// Footprint is what a chat holds: what /forget shows before it deletes
// and reports after.
type Footprint struct {
	Sessions    int // the chat's sessions: every agent's, thread's, teammate's and subagent's
	Messages    int
	Memory      int // memory documents kept for the chat
	Attachments int // stored attachments only this chat's messages show
}

// Empty reports whether the chat holds nothing.
func (f Footprint) Empty() bool { return f.Messages == 0 && f.Memory == 0 && f.Attachments == 0 }

// Store keeps conversations (PostgreSQL).
type Store interface {
	// ResetScope marks a fresh start in every session of scope (a chat
	// address, thread included), audited as done by actor, and returns how
	// many sessions it marked. The mark lands after the newest finished
	// turn, so a turn in flight (a tool step, an unanswered message) stays
	// in view.
	ResetScope(ctx context.Context, scope, actor string) (int, error)
	// ChatFootprint counts what chat (platform:chat_id) holds.
	ChatFootprint(ctx context.Context, chat string) (Footprint, error)
	// ForgetChat deletes what chat holds, and the outbox's copies of the
	// replies delivered to it, in one transaction audited as done by
	// actor, and returns what went and the keys of the chat's sessions.
	ForgetChat(ctx context.Context, chat, actor string) (Footprint, []string, error)
}

// Pruner deletes old records in statements of at most limit rows.
type Pruner interface {
	// PruneMessages deletes the finished turns older than before, never
	// a session's newest message nor part of a tool step, and returns how
	// many messages went.
	PruneMessages(ctx context.Context, before time.Time, limit int) (int, error)
	// PruneAudit deletes the audit log's entries older than before.
	PruneAudit(ctx context.Context, before time.Time, limit int) (int, error)
}
