package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/leader"
	"github.com/switchboard-chat/switchboard/storage/postgres/redact"
)

var _ bot.LeaderLock = (*DB)(nil)

// errLeaseLost says the advisory lock is no longer held by this session.
var errLeaseLost = errors.New("advisory lock no longer held by this connection")

// lockQueryTimeout bounds a statement on the lock session when the
// caller's context sets no deadline. A statement that times out leaves the
// connection unusable, which ends every lock on it: a server that does not
// answer for this long has lost this replica its leaderships anyway.
const lockQueryTimeout = 10 * time.Second

// lockSession is the one connection, taken out of the pool, on which a DB
// holds the session-level advisory locks of all its leaderships (Telegram's
// poller, Discord's gateway, webhook registration, outbox pruning): one
// server backend per replica however many it leads, not one each. The
// locks last as long as the connection, so a crashed or cut-off replica
// loses them all at once; the connection is closed when the last lock is
// released.
type lockSession struct {
	conn *pgx.Conn
	held map[int64]*leaderLease // the locks taken on conn and not released

	// The last check's answer for every lock on conn (see Check): which
	// were granted, and when that check began.
	granted    map[int64]bool
	verifiedAt time.Time
}

// shareChecksFor bounds how old another leadership's check may be for a
// Check to rely on it (see Check).
const shareChecksFor = leader.DefaultInterval / 2

// lockState is a DB's lock session and the mutex that orders every
// statement on it. Statements run one at a time; each is a few
// milliseconds, bounded by lockQueryTimeout.
type lockState struct {
	mu      sync.Mutex
	session *lockSession // nil while the DB leads nothing
}

// TryLead takes the session-level advisory lock for key on the DB's lock
// session, opening that session from the pool when the DB leads nothing
// yet. ok is false when another session holds the lock, or when this DB
// already leads key (advisory locks are re-entrant within a session; two
// holders in one process must not both lead). It implements bot.LeaderLock.
func (db *DB) TryLead(ctx context.Context, key string) (bot.Lease, bool, error) {
	id := advisoryKey(key)
	db.locks.mu.Lock()
	defer db.locks.mu.Unlock()
	if s := db.locks.session; s != nil {
		if _, dup := s.held[id]; dup {
			return nil, false, nil
		}
		var ok bool
		if err := db.onSession(ctx, func(ctx context.Context) error {
			return s.conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", id).Scan(&ok)
		}); err != nil {
			return nil, false, redact.Error(fmt.Errorf("leader lock %q: %w", key, err), db.secret)
		}
		if !ok {
			return nil, false, nil
		}
		return s.add(key, id, db), true, nil
	}
	c, err := db.pool.Acquire(ctx)
	if err != nil {
		return nil, false, redact.Error(fmt.Errorf("leader lock %q: connect to postgres at %s: %w", key, db.where, err), db.secret)
	}
	var ok bool
	if err := c.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", id).Scan(&ok); err != nil {
		// The lock may have been taken before the error: never hand this
		// connection back to the pool.
		closeConn(ctx, c.Hijack())
		return nil, false, redact.Error(fmt.Errorf("leader lock %q: %w", key, err), db.secret)
	}
	if !ok {
		c.Release() // a standby's ask: the pool's connection goes back
		return nil, false, nil
	}
	s := &lockSession{conn: c.Hijack(), held: map[int64]*leaderLease{}}
	db.locks.session = s
	return s.add(key, id, db), true, nil
}

// add records a lock just taken on s and returns its lease.
func (s *lockSession) add(key string, id int64, db *DB) *leaderLease {
	l := &leaderLease{db: db, session: s, key: key, id: id}
	s.held[id] = l
	return l
}

// onSession runs fn on the lock session under ctx's deadline (else
// lockQueryTimeout) but not its cancellation: a caller that gives up
// mid-statement would otherwise leave the connection unusable and end the
// other leaderships' locks with it. When fn fails the connection is closed
// and the session ended, since whether its locks still hold is then
// unknown; every lease on it fails its next Check. db.locks.mu is held.
func (db *DB) onSession(ctx context.Context, fn func(context.Context) error) error {
	s := db.locks.session
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(lockQueryTimeout)
	}
	qctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	defer cancel()
	err := fn(qctx)
	if err != nil {
		db.endSession(ctx, s)
	}
	return err
}

// endSession closes s's connection, which ends every lock on it, and
// forgets s. db.locks.mu is held.
func (db *DB) endSession(ctx context.Context, s *lockSession) {
	closeConn(ctx, s.conn)
	s.held = nil
	if db.locks.session == s {
		db.locks.session = nil
	}
}

// closeLocks ends the lock session, if any: DB.Close calls it.
func (db *DB) closeLocks() {
	db.locks.mu.Lock()
	defer db.locks.mu.Unlock()
	if s := db.locks.session; s != nil {
		db.endSession(context.Background(), s)
	}
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

// leaderLease is one held advisory lock on a DB's lock session.
type leaderLease struct {
	db        *DB
	session   *lockSession
	key       string
	id        int64
	checkedAt time.Time // this lease's last Check
}

// current reports whether l is still held on the DB's live session.
// db.locks.mu is held.
func (l *leaderLease) current() bool {
	return l.db.locks.session == l.session && l.session.held[l.id] == l
}

// Check confirms in pg_locks that the lock session still holds this lock.
// A broken connection fails it, and every other lease on that session.
//
// One query checks every lock of the session, so a replica's leaderships
// share their checks: a Check makes no query when the session's last check
// found this lock granted and began less than half as long ago as this
// lease's previous Check (and less than shareChecksFor ago). Two
// leaderships checking every 2 s then make one query every 2 s between
// them, not two, and a lost lock is noticed at most half an interval later
// than by a check of its own. A lease never relies on its own last check,
// which began longer ago than that.
func (l *leaderLease) Check(ctx context.Context) error {
	l.db.locks.mu.Lock()
	defer l.db.locks.mu.Unlock()
	if !l.current() {
		return fmt.Errorf("leader lock %q: %w (released, or its connection ended)", l.key, errLeaseLost)
	}
	s, now := l.session, time.Now()
	share := min(now.Sub(l.checkedAt)/2, shareChecksFor)
	l.checkedAt = now
	if now.Sub(s.verifiedAt) < share && s.granted[l.id] {
		return nil
	}
	var granted map[int64]bool
	if err := l.db.onSession(ctx, func(ctx context.Context) error {
		var err error
		granted, err = grantedLocks(ctx, s.conn)
		return err
	}); err != nil {
		return redact.Error(fmt.Errorf("leader lock %q: check: %w", l.key, err), l.db.secret)
	}
	s.granted, s.verifiedAt = granted, now
	if !granted[l.id] {
		delete(l.session.held, l.id)
		if len(l.session.held) == 0 {
			l.db.endSession(ctx, l.session) // no lock left to keep it for
		}
		return fmt.Errorf("leader lock %q: %w", l.key, errLeaseLost)
	}
	return nil
}

// grantedLocks returns the keys of the advisory locks conn's session holds.
// A bigint advisory key shows in pg_locks as classid (high 32 bits), objid
// (low 32 bits) and objsubid 1.
func grantedLocks(ctx context.Context, conn *pgx.Conn) (map[int64]bool, error) {
	rows, err := conn.Query(ctx, `SELECT classid::int8, objid::int8 FROM pg_locks
		WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted AND objsubid = 1`)
	if err != nil {
		return nil, err
	}
	granted := map[int64]bool{}
	var hi, lo int64
	_, err = pgx.ForEachRow(rows, []any{&hi, &lo}, func() error {
		granted[int64(uint64(hi)<<32|uint64(uint32(lo)))] = true
		return nil
	})
	return granted, err
}

// Release unlocks; the last release also closes the lock session's
// connection. Releasing twice, or after the session ended, does nothing.
func (l *leaderLease) Release(ctx context.Context) error {
	l.db.locks.mu.Lock()
	defer l.db.locks.mu.Unlock()
	if !l.current() {
		return nil
	}
	s := l.session
	delete(s.held, l.id)
	// Unlock explicitly even when closing next: a backend ends its locks
	// only once it has noticed the closed connection, and a standby asking
	// in between would be refused.
	if err := l.db.onSession(ctx, func(ctx context.Context) error {
		_, err := s.conn.Exec(ctx, "SELECT pg_advisory_unlock($1)", l.id)
		return err
	}); err != nil {
		return redact.Error(fmt.Errorf("leader lock %q: unlock: %w", l.key, err), l.db.secret)
	}
	if len(s.held) == 0 {
		l.db.endSession(ctx, s)
	}
	return nil
}
