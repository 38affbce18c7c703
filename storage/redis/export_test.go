package redis

import "time"

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
