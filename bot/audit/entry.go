package audit

import (
	"context"
	"time"
)

// Entry is one record of the audit log.
type Entry struct {
	At          time.Time
	Actor       string // platform:user_id, or "system"
	Action      string // e.g. "approval.decided"
	SubjectKind string // e.g. "approval"
	SubjectID   string
	Detail      map[string]any
}

// Store reads the audit log.
type Store interface {
	// Audit returns the newest limit entries, newest first.
	Audit(ctx context.Context, limit int) ([]Entry, error)
}
