package redis

import (
	"context"
	"fmt"
	"time"

	"github.com/go-redis/redis_rate/v10"

	"github.com/switchboard-chat/switchboard/bot"
)

// Allow takes one event from key's GCRA bucket, which holds r.Count events
// and refills at r.Count per r.Per. When the event is not allowed,
// retryAfter says how long until the next one would be. Keys live under
// <prefix>rate:<key>.
func (s *Store) Allow(ctx context.Context, key string, r bot.Rate) (bool, time.Duration, error) {
	if r.Count <= 0 || r.Per <= 0 {
		return false, 0, fmt.Errorf("rate limit %q: rate %d per %s is invalid: count and period must be positive", key, r.Count, r.Per)
	}
	limit := redis_rate.Limit{Rate: r.Count, Burst: r.Count, Period: r.Per}
	res, err := s.limiter.Allow(ctx, key, limit)
	if err != nil {
		return false, 0, fmt.Errorf("rate limit %q: %w", key, err)
	}
	if res.Allowed > 0 {
		return true, 0, nil
	}
	retry := res.RetryAfter
	if retry <= 0 {
		// Float rounding in the script can leave a denied event with no
		// wait; never tell a caller to retry immediately.
		retry = time.Millisecond
	}
	return false, retry, nil
}
