package main

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
)

// readyLater is a channel whose readiness the test sets.
type readyLater struct{ up atomic.Bool }

func (*readyLater) Platform() string                                        { return "fake" }
func (*readyLater) Start(ctx context.Context, _ channels.Handler) error     { <-ctx.Done(); return nil }
func (*readyLater) Send(context.Context, channels.Outbound) (string, error) { return "", nil }
func (c *readyLater) Ready(context.Context) error {
	if !c.up.Load() {
		return errors.New("not connected")
	}
	return nil
}

func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// The background loops wait for channelsUpWithin: it must open once the
// migrations ran and every channel is up, not before, and at its limit
// when a channel never comes up.
func TestChannelsUpWithinWaitsForTheChannels(t *testing.T) {
	ch := &readyLater{}
	d := &daemon{st: &stores{}, log: slog.New(slog.DiscardHandler),
		channels: map[string]channels.Channel{"fake": ch}}
	ctx := context.Background()

	up := d.channelsUpWithin(ctx, time.Hour)
	time.Sleep(5 * upLook)
	if closed(up) {
		t.Fatal("open before the migrations ran and the channel was up")
	}
	d.migrated.Store(true)
	time.Sleep(5 * upLook)
	if closed(up) {
		t.Fatal("open before the channel was up")
	}
	ch.up.Store(true)
	select {
	case <-up:
	case <-time.After(10 * time.Second):
		t.Fatal("not open 10 s after the channel came up")
	}

	ch.up.Store(false)
	select {
	case <-d.channelsUpWithin(ctx, 3*upLook):
	case <-time.After(10 * time.Second):
		t.Fatal("a channel that never comes up held start-up past the limit")
	}
	cctx, cancel := context.WithCancel(ctx)
	never := d.channelsUpWithin(cctx, time.Hour)
	cancel()
	select {
	case <-never:
	case <-time.After(10 * time.Second):
		t.Fatal("channelsUpWithin outlived its context")
	}
}
