package redis

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/switchboard-chat/switchboard/bot"
)

var _ bot.StopBus = (*Store)(nil)

// stopsChannel is the pub/sub channel of /stop requests, one for all
// sessions: a stop is rare, and every replica must hear it, since only the
// one running the turn knows it runs there.
const stopsChannel = "stops"

// PublishStop implements bot.StopBus.
func (s *Store) PublishStop(ctx context.Context, req bot.StopRequest) error {
	b, err := json.Marshal(stopWire{Session: req.Session, By: req.By})
	if err != nil {
		return fmt.Errorf("encode stop: %w", err)
	}
	if err := s.client.Publish(ctx, s.prefix+stopsChannel, b).Err(); err != nil {
		return fmt.Errorf("redis publish stop: %w", err)
	}
	return nil
}

// stopWire is a stop request as published.
type stopWire struct {
	Session string `json:"session"`
	By      string `json:"by"`
}

// SubscribeStops implements bot.StopBus. The subscription is confirmed
// before it returns, so a stop published afterwards is delivered; requests
// that cannot be decoded are dropped.
func (s *Store) SubscribeStops(ctx context.Context) (<-chan bot.StopRequest, func(), error) {
	sub := s.client.Subscribe(ctx, s.prefix+stopsChannel)
	if _, err := sub.Receive(ctx); err != nil {
		_ = sub.Close()
		return nil, nil, fmt.Errorf("redis subscribe stops: %w", err)
	}
	out := make(chan bot.StopRequest, 16)
	done := make(chan struct{})
	go func() {
		defer close(out)
		msgs := sub.Channel()
		for {
			select {
			case <-done:
				return
			case m, ok := <-msgs:
				if !ok {
					return
				}
				var w stopWire
				if json.Unmarshal([]byte(m.Payload), &w) != nil || w.Session == "" {
					continue
				}
				select {
				case out <- bot.StopRequest{Session: w.Session, By: w.By}:
				case <-done:
					return
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
