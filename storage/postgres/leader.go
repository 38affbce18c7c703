package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/bot"
)

var _ bot.LeaderLock = (*DB)(nil)

// errLeaseLost says the advisory lock is no longer held by this session.
var errLeaseLost = errors.New("advisory lock no longer held by this connection")

// TryLead takes the session-level advisory lock for key on a connection of
// its own, taken out of the pool and held while leading: the lock lasts as
// long as that connection, so a crashed or cut-off leader loses it at once.
// ok is false when another session holds the lock. It implements
// bot.LeaderLock.
func (db *DB) TryLead(ctx context.Context, key string) (bot.Lease, bool, error) {
	c, err := db.pool.Acquire(ctx)
	if err != nil {
		return nil, false, redact(fmt.Errorf("leader lock %q: connect to postgres at %s: %w", key, db.where, err), db.secret)
	}
	id := advisoryKey(key)
	var ok bool
	if err := c.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", id).Scan(&ok); err != nil {
		// The lock may have been taken before the error: never hand this
		// connection back to the pool.
		closeConn(ctx, c.Hijack())
		return nil, false, redact(fmt.Errorf("leader lock %q: %w", key, err), db.secret)
	}
	if !ok {
		c.Release()
		return nil, false, nil
	}
	return &leaderLease{conn: c.Hijack(), key: key, id: id, secret: db.secret}, true, nil
}

// advisoryKey maps a lock name to the 64-bit key of an advisory lock.
func advisoryKey(key string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte("switchboard:leader:" + key))
	return int64(h.Sum64())
}

// closeConn closes a connection that left the pool.
func closeConn(ctx context.Context, conn *pgx.Conn) {
	_ = conn.Close(context.WithoutCancel(ctx))
}

// leaderLease is a held advisory lock and the connection it lives on.
type leaderLease struct {
	mu     sync.Mutex
	conn   *pgx.Conn
	key    string
	id     int64
	secret string
}

// Check confirms in pg_locks that this connection still holds the lock. A
// broken connection fails it.
func (l *leaderLease) Check(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		return fmt.Errorf("leader lock %q: %w (released)", l.key, errLeaseLost)
	}
	// A bigint advisory key shows in pg_locks as classid (high 32 bits),
	// objid (low 32 bits) and objsubid 1.
	hi, lo := int64(uint64(l.id)>>32), int64(uint32(l.id))
	var held bool
	err := l.conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks
		WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted
		  AND classid::int8 = $1 AND objid::int8 = $2 AND objsubid = 1)`, hi, lo).Scan(&held)
	if err != nil {
		return redact(fmt.Errorf("leader lock %q: check: %w", l.key, err), l.secret)
	}
	if !held {
		return fmt.Errorf("leader lock %q: %w", l.key, errLeaseLost)
	}
	return nil
}

// Release unlocks and closes the connection; closing alone would end the
// lock too.
func (l *leaderLease) Release(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		return nil
	}
	conn := l.conn
	l.conn = nil
	_, err := conn.Exec(ctx, "SELECT pg_advisory_unlock($1)", l.id)
	closeConn(ctx, conn)
	if err != nil {
		return redact(fmt.Errorf("leader lock %q: unlock: %w", l.key, err), l.secret)
	}
	return nil
}
