package redis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"time"
)

// DefaultInstanceTTL is how long an instance's heartbeat key outlives its
// last beat: a process that died (kill -9, a lost host) is recognised as
// gone that long after, and its locks can be taken over.
const DefaultInstanceTTL = 3 * time.Second

// DefaultIdleProbe is how often a store that holds no lock pings Redis.
const DefaultIdleProbe = 10 * time.Second

// holdLinger is how many instance TTLs the heartbeat goes on after the
// last lock was given back (9 s by default), so that steady traffic (a
// lock per message, given back before the next) keeps one beat a second
// instead of starting the beat anew, with a write of its own, for every
// message.
const holdLinger = 3

// instance is this process's identity in Redis: a random id and a
// heartbeat key <prefix>instance:<id> refreshed every TTL/3 while the
// instance holds locks. Every lock the store takes names its instance, so
// a lock whose instance stopped beating is known to be stale at once.
//
// An instance that holds no lock needs no heartbeat: the key is set with
// each lock taken (in the same script) and beaten while any is held (and
// holdLinger TTLs after), and then expires. Its beat doubles as the probe
// that ends an outage (calls fail fast meanwhile), so it also beats while
// Redis is down; while it holds nothing it only pings Redis every
// IdleProbe, so an outage is known before a message's first call has to
// wait out go-redis's dial retries.
type instance struct {
	id    string
	key   string // full key, prefix included
	label string // stored as the key's value, for people reading Redis
	ttl   time.Duration
	// idleProbe is how often Redis is pinged while no lock is held.
	idleProbe time.Duration

	mu      sync.Mutex
	held    int           // locks taken and not given back
	dropped time.Time     // when held last fell to 0
	beating bool          // the heartbeat beats every TTL/3 without being woken
	wake    chan struct{} // the heartbeat is needed again

	stop     context.CancelFunc
	stopOnce sync.Once
	done     chan struct{}
}

// hold counts a lock taken; the heartbeat goes on while any is held. It
// wakes the heartbeat only when it does not beat already.
func (in *instance) hold() {
	in.mu.Lock()
	in.held++
	wake := !in.beating
	in.beating = true // one wake-up is enough: the heartbeat beats from now on
	in.mu.Unlock()
	if wake {
		in.needed()
	}
}

// drop counts a lock given back.
func (in *instance) drop() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.held = max(0, in.held-1)
	if in.held == 0 {
		in.dropped = time.Now()
	}
}

// holding reports whether a lock is held or was within holdLinger TTLs.
func (in *instance) holding() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.held > 0 || (!in.dropped.IsZero() && time.Since(in.dropped) < holdLinger*in.ttl)
}

// setBeating records whether the heartbeat beats without being woken.
func (in *instance) setBeating(b bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.beating = b
}

// needed wakes the heartbeat if it waits.
func (in *instance) needed() {
	select {
	case in.wake <- struct{}{}:
	default:
	}
}

// newInstanceID returns a fresh random instance id (hex).
func newInstanceID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("redis instance id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// instanceKey is the heartbeat key of instance id, without the prefix.
func instanceKey(id string) string { return "instance:" + id }

// beat starts the heartbeat goroutine; stopBeating ends it. It beats once,
// then every TTL/3 while the instance holds a lock or Redis is down, and
// otherwise pings Redis every idleProbe until it is needed again.
func (s *Store) beat() {
	ctx, cancel := context.WithCancel(context.Background())
	s.inst.stop = cancel
	s.inst.done = make(chan struct{})
	go func() {
		defer close(s.inst.done)
		for first := true; ; first = false {
			needed := first || s.beatNeeded()
			bctx, stop := context.WithTimeout(asProbe(ctx), s.inst.ttl/3)
			// Failures are logged once per outage by the health hook.
			if needed {
				_ = s.client.Set(bctx, s.inst.key, s.inst.label, s.inst.ttl).Err()
			} else {
				_ = s.client.Ping(bctx).Err()
			}
			stop()
			if !s.waitForBeat(ctx) {
				return
			}
		}
	}()
}

// beatNeeded reports whether the heartbeat key must be kept: a lock is
// held (or was within holdLinger TTLs), or Redis is down (the beat is then the
// probe that ends the outage).
func (s *Store) beatNeeded() bool { return s.inst.holding() || !s.health.Available() }

// waitForBeat waits until the next beat is due: the next TTL/3 beat while
// it is needed, else the next idle probe, or until a lock is taken or a
// call finds Redis down. It reports false when ctx ended.
func (s *Store) waitForBeat(ctx context.Context) bool {
	every, needed := s.inst.idleProbe, s.beatNeeded()
	if needed {
		every = s.inst.ttl / 3
	}
	s.inst.setBeating(needed)
	t := time.NewTimer(every)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
	case <-s.inst.wake:
	}
	return true
}

// stopBeating ends the heartbeat without removing the key, as a crash
// would: the key expires after the instance TTL.
func (s *Store) stopBeating() {
	s.inst.stopOnce.Do(func() {
		s.inst.stop()
		<-s.inst.done
	})
}

// Instance returns this store's instance id, the owner named in its locks.
func (s *Store) Instance() string { return s.inst.id }

// Alive reports whether the instance id has a heartbeat (its key exists):
// it lives and holds locks, or did within the instance TTL.
func (s *Store) Alive(ctx context.Context, id string) (bool, error) {
	n, err := s.client.Exists(ctx, s.prefix+instanceKey(id)).Result()
	if err != nil {
		return false, fmt.Errorf("redis instance %s alive: %w", id, err)
	}
	return n == 1, nil
}
