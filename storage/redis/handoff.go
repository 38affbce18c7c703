package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/switchboard-chat/switchboard/bot/handoff"
)

var _ handoff.RouteCache = (*Store)(nil)

// noRoute is the cached value of "this chat has no route".
const noRoute = "-"

// GetRoute implements handoff.RouteCache. Keys live under
// <prefix>handoff:<address>.
func (s *Store) GetRoute(ctx context.Context, address string) (*handoff.Route, bool, error) {
	raw, err := s.client.Get(ctx, s.prefix+"handoff:"+address).Result()
	if errors.Is(err, goredis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("get handoff route: %w", err)
	}
	if raw == noRoute {
		return nil, true, nil
	}
	var r handoff.Route
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		return nil, false, nil // unreadable: ask the durable copy
	}
	return &r, true, nil
}

// PutRoute implements handoff.RouteCache.
func (s *Store) PutRoute(ctx context.Context, address string, r *handoff.Route, ttl time.Duration) error {
	val := noRoute
	if r != nil {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		val = string(b)
	}
	if ttl <= 0 {
		ttl = time.Second
	}
	if err := s.client.Set(ctx, s.prefix+"handoff:"+address, val, ttl).Err(); err != nil {
		return fmt.Errorf("put handoff route: %w", err)
	}
	return nil
}
