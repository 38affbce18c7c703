package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/switchboard-chat/switchboard/bot/subagents"
	"github.com/switchboard-chat/switchboard/tools"
)

var _ subagents.Store = (*Store)(nil)

// Subagent keys: who runs (sorted sets scored by lease expiry, so a dead
// replica's runs stop counting when their lease ends), each parent's
// records (a hash that expires when it has been idle for the archive time),
// and cancel requests.
const (
	subRunningKey  = "sub:running"
	subChildrenKey = "sub:children:"
	subRecordsKey  = "sub:records:"
	subCancelKey   = "sub:cancel:"
)

// acquireSubagent takes a slot when both the daemon-wide count and the
// parent's count are under their limits. Lease ends are on Redis' clock,
// so replicas' clocks do not matter.
var acquireSubagent = goredis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local running = redis.call('ZCARD', KEYS[1])
local children = redis.call('ZCARD', KEYS[2])
if running >= tonumber(ARGV[2]) or children >= tonumber(ARGV[3]) then
  return {0, running, children}
end
local lease = tonumber(ARGV[4])
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
redis.call('ZADD', KEYS[2], now + lease, ARGV[1])
redis.call('PEXPIRE', KEYS[2], lease * 2)
return {1, running + 1, children + 1}`)

// refreshSubagent extends a held slot's lease; it reports 0 when the slot
// was lost (the lease ran out).
var refreshSubagent = goredis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[2])
local a = redis.call('ZADD', KEYS[1], 'XX', 'CH', now + lease, ARGV[1])
redis.call('ZADD', KEYS[2], 'XX', now + lease, ARGV[1])
redis.call('PEXPIRE', KEYS[2], lease * 2)
return redis.call('ZSCORE', KEYS[1], ARGV[1]) and 1 or 0`)

// AcquireSubagent implements subagents.Store.
func (s *Store) AcquireSubagent(ctx context.Context, id, parent string, maxRunning, maxChildren int, lease time.Duration) (subagents.Slot, error) {
	res, err := acquireSubagent.Run(ctx, s.client, []string{s.prefix + subRunningKey, s.prefix + subChildrenKey + parent},
		id, maxRunning, maxChildren, lease.Milliseconds()).Int64Slice()
	if err != nil || len(res) != 3 {
		return subagents.Slot{}, fmt.Errorf("count running subagents: %w", err)
	}
	return subagents.Slot{Got: res[0] == 1, Running: int(res[1]), Children: int(res[2])}, nil
}

// RefreshSubagent implements subagents.Store.
func (s *Store) RefreshSubagent(ctx context.Context, id, parent string, lease time.Duration) error {
	err := refreshSubagent.Run(ctx, s.client, []string{s.prefix + subRunningKey, s.prefix + subChildrenKey + parent},
		id, lease.Milliseconds()).Err()
	if err != nil {
		return fmt.Errorf("refresh subagent slot: %w", err)
	}
	return nil
}

// ReleaseSubagent implements subagents.Store.
func (s *Store) ReleaseSubagent(ctx context.Context, id, parent string) error {
	_, err := s.client.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		p.ZRem(ctx, s.prefix+subRunningKey, id)
		p.ZRem(ctx, s.prefix+subChildrenKey+parent, id)
		return nil
	})
	if err != nil {
		return fmt.Errorf("release subagent slot: %w", err)
	}
	return nil
}

// SaveSubagent implements subagents.Store: the parent's records expire
// together once none has changed for keep.
func (s *Store) SaveSubagent(ctx context.Context, sub tools.Subagent, keep time.Duration) error {
	raw, err := json.Marshal(sub)
	if err != nil {
		return err
	}
	key := s.prefix + subRecordsKey + sub.Parent
	_, err = s.client.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		p.HSet(ctx, key, sub.ID, raw)
		p.Expire(ctx, key, keep)
		return nil
	})
	if err != nil {
		return fmt.Errorf("save subagent %s: %w", sub.ID, err)
	}
	return nil
}

// Subagents implements subagents.Store, newest first.
func (s *Store) Subagents(ctx context.Context, parent string) ([]tools.Subagent, error) {
	all, err := s.client.HGetAll(ctx, s.prefix+subRecordsKey+parent).Result()
	if err != nil {
		return nil, fmt.Errorf("list subagents: %w", err)
	}
	out := make([]tools.Subagent, 0, len(all))
	for _, raw := range all {
		var sub tools.Subagent
		if json.Unmarshal([]byte(raw), &sub) == nil {
			out = append(out, sub)
		}
	}
	slices.SortFunc(out, func(a, b tools.Subagent) int { return b.Started.Compare(a.Started) })
	return out, nil
}

// Subagent implements subagents.Store.
func (s *Store) Subagent(ctx context.Context, parent, id string) (tools.Subagent, bool, error) {
	raw, err := s.client.HGet(ctx, s.prefix+subRecordsKey+parent, id).Result()
	if errors.Is(err, goredis.Nil) {
		return tools.Subagent{}, false, nil
	}
	if err != nil {
		return tools.Subagent{}, false, fmt.Errorf("read subagent %s: %w", id, err)
	}
	var sub tools.Subagent
	if err := json.Unmarshal([]byte(raw), &sub); err != nil {
		return sub, false, fmt.Errorf("read subagent %s: %w", id, err)
	}
	return sub, true, nil
}

// RequestCancel implements subagents.Store: the replica running id sees
// the request within a second.
func (s *Store) RequestCancel(ctx context.Context, id string) error {
	if err := s.client.Set(ctx, s.prefix+subCancelKey+id, 1, time.Hour).Err(); err != nil {
		return fmt.Errorf("cancel subagent %s: %w", id, err)
	}
	return nil
}

// CancelRequested implements subagents.Store.
func (s *Store) CancelRequested(ctx context.Context, id string) (bool, error) {
	n, err := s.client.Exists(ctx, s.prefix+subCancelKey+id).Result()
	if err != nil {
		return false, fmt.Errorf("check subagent %s: %w", id, err)
	}
	return n > 0, nil
}
