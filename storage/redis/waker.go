package redis

import (
	"context"
	"fmt"
	"sync"

	"github.com/switchboard-chat/switchboard/bot"
)

var _ bot.Waker = (*Store)(nil)

// Wake publishes a wake-up for key to every replica's subscribers.
func (s *Store) Wake(ctx context.Context, key string) error {
	if err := s.client.Publish(ctx, s.prefix+"wake:"+key, "1").Err(); err != nil {
		return fmt.Errorf("redis wake %s: %w", key, err)
	}
	return nil
}

// Subscribe delivers a value on the returned channel for each Wake of key
// (coalesced: a burst may arrive as one). stop ends the subscription.
func (s *Store) Subscribe(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	sub := s.client.Subscribe(ctx, s.prefix+"wake:"+key)
	if _, err := sub.Receive(ctx); err != nil { // wait for the subscription to be confirmed
		_ = sub.Close()
		return nil, nil, fmt.Errorf("redis subscribe %s: %w", key, err)
	}
	out := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		msgs := sub.Channel()
		for {
			select {
			case <-done:
				return
			case _, ok := <-msgs:
				if !ok {
					return
				}
				select {
				case out <- struct{}{}:
				default:
				}
			}
		}
	}()
	stop := sync.OnceFunc(func() {
		close(done)
		_ = sub.Close()
	})
	return out, stop, nil
}
