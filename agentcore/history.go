package agentcore

import (
	"context"
	"errors"
	"strings"
)

// ErrDuplicate is returned by History.Append when a message's ExternalID was
// already stored for the session.
var ErrDuplicate = errors.New("message already recorded")

// SessionKey identifies one conversation of one agent in one place. Scope is
// where the conversation lives: a chat address ("telegram:42",
// "slack:C1:1700.1") or a job ("job:daily-report").
type SessionKey struct {
	Agent string
	Scope string
}

// String renders the key as agent/scope.
func (k SessionKey) String() string { return k.Agent + "/" + k.Scope }

// ParseSessionKey is the inverse of SessionKey.String.
func ParseSessionKey(s string) (SessionKey, error) {
	agent, scope, ok := strings.Cut(s, "/")
	if !ok || agent == "" || scope == "" {
		return SessionKey{}, errors.New("session key " + s + ": want agent/scope")
	}
	return SessionKey{Agent: agent, Scope: scope}, nil
}

// History stores sessions. Postgres implements it; every step of a run is
// appended as it happens so a run can continue after a restart.
type History interface {
	// Load returns the session's messages in order: at most limit of the
	// newest when limit > 0, else all.
	Load(ctx context.Context, session string, limit int) ([]Message, error)
	// Append adds msgs to the end of the session, creating it if needed, in
	// one transaction, and returns the sequence number of the last one.
	// A user message whose ExternalID the session already has makes the whole
	// append fail with ErrDuplicate.
	Append(ctx context.Context, session string, msgs ...Message) (lastSeq int64, err error)
	// Insert stores msgs right after the message at seq after and returns
	// the seq of the last one. User messages stored after `after` meanwhile
	// (people write while the agent works) move behind msgs, so the stored
	// order is the order the model saw; moved says how many did. Any other
	// message after `after` means another run wrote to the session: Insert
	// then stores nothing and fails with ErrConflict.
	Insert(ctx context.Context, session string, after int64, msgs ...Message) (lastSeq int64, moved int, err error)
}

// ErrConflict is returned by History.Insert when the session changed under
// the run in a way only a concurrent run could have caused.
var ErrConflict = errors.New("session was changed by another run")
