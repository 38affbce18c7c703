package redis

import (
	"context"
	"fmt"
	"time"
)

// FirstSeen records key for ttl and reports whether it was new (SET NX).
// It serves both as bot.Deduper for inbound events and bot.Notice for
// one-time notices. Keys live under <prefix>seen:<key>.
func (s *Store) FirstSeen(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	if ttl <= 0 {
		return false, fmt.Errorf("first seen %q: ttl %s must be positive", key, ttl)
	}
	isNew, err := s.client.SetNX(ctx, s.prefix+"seen:"+key, 1, ttl).Result()
	if err != nil {
		return false, fmt.Errorf("first seen %q: %w", key, err)
	}
	return isNew, nil
}
