package redis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
)

// DefaultInstanceTTL is how long an instance's heartbeat key outlives its
// last beat: a process that died (kill -9, a lost host) is recognised as
// gone that long after, and its locks can be taken over.
const DefaultInstanceTTL = 3 * time.Second

// instance is this process's identity in Redis: a random id and a
// heartbeat key <prefix>instance:<id> refreshed every TTL/3. Every lock the
// store takes names its instance, so a lock whose instance stopped beating
// is known to be stale at once.
type instance struct {
	id    string
	key   string // full key, prefix included
	label string // stored as the key's value, for people reading Redis
	ttl   time.Duration

	stop     context.CancelFunc
	stopOnce sync.Once
	done     chan struct{}
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

// beat starts the heartbeat goroutine; stopBeating ends it.
func (s *Store) beat() {
	ctx, cancel := context.WithCancel(context.Background())
	s.inst.stop = cancel
	s.inst.done = make(chan struct{})
	go func() {
		defer close(s.inst.done)
		for {
			bctx, stop := context.WithTimeout(asProbe(ctx), s.inst.ttl/3)
			// Failures are logged once per outage by the health hook.
			_ = s.client.Set(bctx, s.inst.key, s.inst.label, s.inst.ttl).Err()
			stop()
			t := time.NewTimer(bot.UntilBeat(s.inst.ttl / 3)) // with the daemon's other idle work
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}()
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

// Alive reports whether the instance id still beats (its heartbeat key
// exists).
func (s *Store) Alive(ctx context.Context, id string) (bool, error) {
	n, err := s.client.Exists(ctx, s.prefix+instanceKey(id)).Result()
	if err != nil {
		return false, fmt.Errorf("redis instance %s alive: %w", id, err)
	}
	return n == 1, nil
}
