package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/switchboard-chat/switchboard/bot/budgets"
)

var _ budgets.Totals = (*Store)(nil)

// budgetKeyPrefix is where the budgets' running totals live:
// <prefix>budget:<key>.
const budgetKeyPrefix = "budget:"

var (
	// seedBudgetScript sets a missing total and returns what the key holds.
	seedBudgetScript = goredis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return tonumber(ARGV[1]) end
return tonumber(redis.call('GET', KEYS[1]))`)
	// addBudgetScript adds to a total only when it exists: a missing total
	// is rebuilt from PostgreSQL, which holds the call already.
	addBudgetScript = goredis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('INCRBY', KEYS[1], ARGV[1]) end
return false`)
)

// BudgetTotal implements budgets.Totals.
func (s *Store) BudgetTotal(ctx context.Context, key string) (int64, bool, error) {
	v, err := s.client.Get(ctx, s.prefix+budgetKeyPrefix+key).Result()
	if errors.Is(err, goredis.Nil) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("read budget total %s: %w", key, err)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("budget total %s holds %q, not a number: %w", key, v, err)
	}
	return n, true, nil
}

// SeedBudgetTotal implements budgets.Totals.
func (s *Store) SeedBudgetTotal(ctx context.Context, key string, total int64, expireAt time.Time) (int64, error) {
	ttl := time.Until(expireAt).Milliseconds()
	if ttl <= 0 {
		return total, nil // the period is over: nothing to keep
	}
	n, err := seedBudgetScript.Run(ctx, s.scripts, []string{budgetKeyPrefix + key}, total, ttl).Int64()
	if err != nil {
		return 0, fmt.Errorf("seed budget total %s: %w", key, err)
	}
	return n, nil
}

// AddBudgetTotal implements budgets.Totals.
func (s *Store) AddBudgetTotal(ctx context.Context, key string, n int64) error {
	if n <= 0 {
		return nil
	}
	err := addBudgetScript.Run(ctx, s.scripts, []string{budgetKeyPrefix + key}, n).Err()
	if err != nil && !errors.Is(err, goredis.Nil) {
		return fmt.Errorf("add to budget total %s: %w", key, err)
	}
	return nil
}
