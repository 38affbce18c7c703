package redis

// StopHeartbeat ends the instance heartbeat without removing its key, as
// kill -9 would; tests use it to play a crashed process.
func (s *Store) StopHeartbeat() { s.stopBeating() }
