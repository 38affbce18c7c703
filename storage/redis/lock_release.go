package redis

import (
	"context"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// releaseDelay is how long a lock given back with ReleaseSoon may wait for
// this process's next Obtain to carry it before it is sent alone.
const releaseDelay = 2 * time.Millisecond

// releaseManyScript releases KEYS[i] when it still holds ARGV[i].
var releaseManyScript = goredis.NewScript(`
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[i] then
    redis.call('DEL', key)
  end
end
return 0`)

// releases are locks given back with ReleaseSoon and not yet sent. The next
// Obtain sends them in its own script call (one round trip for both), or a
// timer sends them together after releaseDelay.
type releases struct {
	mu      sync.Mutex
	pending []*Lock
	sending map[*Lock]bool // taken by a flush whose script has not returned
	timer   *time.Timer
	closed  bool // the store is closed: what is left expires with its TTL
}

// add queues l and arms the timer that sends the queue when no Obtain
// comes first.
func (r *releases) add(l *Lock) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	r.pending = append(r.pending, l)
	if r.timer == nil {
		r.timer = time.AfterFunc(releaseDelay, func() { l.s.flushReleases(context.Background()) })
	}
}

// close sends nothing more; it returns what was queued.
func (r *releases) close() []*Lock {
	p := r.take()
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	return p
}

// take empties the queue.
func (r *releases) take() []*Lock {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.takeLocked()
}

// takeLocked is take with r.mu held.
func (r *releases) takeLocked() []*Lock {
	p := r.pending
	r.pending = nil
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
	return p
}

// putBack queues locks whose release did not reach Redis, to be tried with
// the next Obtain or flush. Should that fail too, they expire with their
// TTL.
func (r *releases) putBack(ls []*Lock, s *Store) {
	if len(ls) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	r.pending = append(ls, r.pending...)
	if r.timer == nil {
		r.timer = time.AfterFunc(time.Second, func() { s.flushReleases(context.Background()) })
	}
}

// takeForObtain empties the queue for an Obtain, which sends those releases
// itself, and also returns the releases a flush is sending right now: the
// Obtain repeats them (a release is harmless twice), so it never finds its
// own process's released lock still held because the flush's script has
// not run yet and waits out a retry for a lock nobody holds.
func (r *releases) takeForObtain() (taken, repeated []*Lock) {
	r.mu.Lock()
	defer r.mu.Unlock()
	taken = r.takeLocked()
	for l := range r.sending {
		repeated = append(repeated, l)
	}
	return taken, repeated
}

// takeForFlush empties the queue for a flush and marks its locks as being
// sent until sent is called.
func (r *releases) takeForFlush() []*Lock {
	r.mu.Lock()
	defer r.mu.Unlock()
	ls := r.takeLocked()
	if len(ls) > 0 && r.sending == nil {
		r.sending = map[*Lock]bool{}
	}
	for _, l := range ls {
		r.sending[l] = true
	}
	return ls
}

// sent ends what takeForFlush began.
func (r *releases) sent(ls []*Lock) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, l := range ls {
		delete(r.sending, l)
	}
}

// ReleaseSoon gives the lock back without waiting for Redis: the release
// is sent with this process's next Obtain, in the same round trip, or on
// its own within a few milliseconds. A lock lost meanwhile is not
// reported; Release does that.
func (l *Lock) ReleaseSoon() {
	l.s.released.add(l)
	l.drop()
}

// flushReleases sends the queued releases in one script call.
func (s *Store) flushReleases(ctx context.Context) {
	ls := s.released.takeForFlush()
	defer s.released.sent(ls)
	s.sendReleases(ctx, ls)
}

// sendReleases releases ls in one script call, or queues them again.
func (s *Store) sendReleases(ctx context.Context, ls []*Lock) {
	if len(ls) == 0 {
		return
	}
	keys, values := releaseArgs(ls)
	if err := releaseManyScript.Run(ctx, s.scripts, keys, values...).Err(); err != nil {
		s.logger.Debug("lock release failed; retrying", "locks", len(ls), "err", err)
		s.released.putBack(ls, s)
	}
}

// releaseArgs are the keys and values of ls for a release script.
func releaseArgs(ls []*Lock) (keys []string, values []any) {
	keys, values = make([]string, len(ls)), make([]any, len(ls))
	for i, l := range ls {
		keys[i], values[i] = "lock:"+l.key, l.value
	}
	return keys, values
}
