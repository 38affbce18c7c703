package bot

import "context"

// LeaderLock grants leadership of a key to one replica at a time.
// PostgreSQL implements it with a session-level advisory lock, so
// leadership does not depend on Redis: a Redis outage never stops the
// Telegram poller. bot/leader keeps a leadership for as long as a task
// runs; a Pruning takes one for a single pass.
type LeaderLock interface {
	// TryLead takes leadership of key when no one holds it. ok is false
	// (with a nil error) when another replica leads; err says the lock
	// service could not be asked.
	TryLead(ctx context.Context, key string) (lease Lease, ok bool, err error)
}

// Lease is leadership held by this replica.
type Lease interface {
	// Check returns an error when leadership may be lost (the connection
	// that holds it broke); the holder must step down then.
	Check(ctx context.Context) error
	// Release gives leadership up.
	Release(ctx context.Context) error
}
