package bot

import (
	"context"
	"errors"

	"github.com/switchboard-chat/switchboard/channels"
)

// ErrNotFound is returned by stores when a record does not exist.
var ErrNotFound = errors.New("not found")

// DecisionMessage is a message posted about something people decide (an
// approval, an access or grant request): to a decider, or the "waiting…"
// note in the requester's chat, so it can be edited once decided.
type DecisionMessage struct {
	OutboxID          int64
	Role              string // "approver" or "requester"
	To                channels.Address
	PlatformMessageID string // empty until delivered
}

// DecisionMessages remembers the messages posted about a decision. The
// kind names what is decided (each feature its own); subjectID is its id.
type DecisionMessages interface {
	AddDecisionMessage(ctx context.Context, kind, subjectID string, outboxID int64, role string) error
	// DecisionMessagesOf lists them with the platform message id the outbox
	// recorded on delivery.
	DecisionMessagesOf(ctx context.Context, kind, subjectID string) ([]DecisionMessage, error)
}

// Waker wakes waiters across replicas (Redis pub/sub). It is only a hint:
// waiters also poll the store, which is the truth.
type Waker interface {
	Wake(ctx context.Context, key string) error
	// Subscribe returns a channel that receives a value for each Wake of
	// key, and a func to stop.
	Subscribe(ctx context.Context, key string) (<-chan struct{}, func(), error)
}
