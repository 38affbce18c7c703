package redis

import (
	"context"
	"time"
)

// StopHeartbeat ends the instance heartbeat without removing its key, as
// kill -9 would; tests use it to play a crashed process.
func (s *Store) StopHeartbeat() { s.stopBeating() }

// SetMailReclaim shortens how long an unconfirmed mailbox read waits
// before it is delivered again, and returns the old value.
func SetMailReclaim(d time.Duration) time.Duration {
	old := mailReclaim
	mailReclaim = d
	return old
}

// StartFlushForTest takes the queued releases as a flush does, without
// sending them yet, and returns what sends them: a flush caught mid-way.
func (s *Store) StartFlushForTest() (send func()) {
	ls := s.released.takeForFlush()
	return func() {
		defer s.released.sent(ls)
		s.sendReleases(context.Background(), ls)
	}
}
