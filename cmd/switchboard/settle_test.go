package main

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
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

// The background loops wait for settledWithin: it must open once the
// migrations ran and every channel is up, not before, and at its limit
// when a channel never comes up.
func TestSettledWithinWaitsForTheChannels(t *testing.T) {
	ch := &readyLater{}
	d := &daemon{st: &stores{}, log: slog.New(slog.DiscardHandler),
		channels: map[string]channels.Channel{"fake": ch}}
	ctx := context.Background()

	up := d.settledWithin(ctx, time.Hour)
	time.Sleep(5 * settleLook)
	if closed(up) {
		t.Fatal("settled before the migrations ran and the channel was up")
	}
	d.migrated.Store(true)
	time.Sleep(5 * settleLook)
	if closed(up) {
		t.Fatal("settled before the channel was up")
	}
	ch.up.Store(true)
	select {
	case <-up:
	case <-time.After(10 * time.Second):
		t.Fatal("not settled 10 s after the channel came up")
	}

	ch.up.Store(false)
	select {
	case <-d.settledWithin(ctx, 3*settleLook):
	case <-time.After(10 * time.Second):
		t.Fatal("a channel that never comes up held start-up past the limit")
	}
	cctx, cancel := context.WithCancel(ctx)
	never := d.settledWithin(cctx, time.Hour)
	cancel()
	select {
	case <-never:
	case <-time.After(10 * time.Second):
		t.Fatal("settledWithin outlived its context")
	}
}

// The start-up release waits for its quiet time and then gives memory back
// only when the daemon allocated little meanwhile; a daemon shutting down
// gives nothing back.
func TestTrimAfterQuietOnlyWhenQuiet(t *testing.T) {
	for _, tc := range []struct {
		name    string
		during  uint64 // allocated during the quiet time
		trimmed bool
	}{
		{"quiet", 100 << 10, true},
		{"busy", trimIdleBelow, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// start-up's own allocations (the first read) do not count;
			// tc.during is what the next read finds on top.
			reads := 0
			allocated := func() uint64 {
				reads++
				if reads == 1 {
					return 5 << 20
				}
				return 5<<20 + tc.during
			}
			trims := 0
			it := &idleTrim{allocated: allocated, trim: func() { trims++ }}
			const quiet = 50 * time.Millisecond
			start := time.Now()
			got := trimAfterQuiet(context.Background(), quiet, it)
			if waited := time.Since(start); waited < quiet {
				t.Fatalf("trimAfterQuiet looked after %v, before its quiet time (%v) was over", waited, quiet)
			}
			if got != tc.trimmed || (trims == 1) != tc.trimmed {
				t.Errorf("trimAfterQuiet = %v, trims %d after %d bytes; want trimmed %v", got, trims, tc.during, tc.trimmed)
			}
		})
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	trims := 0
	it := &idleTrim{allocated: func() uint64 { return 0 }, trim: func() { trims++ }}
	if trimAfterQuiet(ctx, time.Hour, it) || trims != 0 {
		t.Error("trimAfterQuiet gave memory back after its context ended")
	}
}

// The daemon's start-up release: after start-up is over and the quiet
// time, logged at debug level with the runtime's figures.
func TestReleaseStartupMemoryAfterStartUp(t *testing.T) {
	var logs channeltest.Log
	ch := &readyLater{}
	d := &daemon{st: &stores{}, channels: map[string]channels.Channel{"fake": ch},
		log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	d.migrated.Store(true)
	up := make(chan struct{})
	close(up)
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.releaseStartupMemory(context.Background(), up, 10*time.Millisecond)
	}()
	time.Sleep(20 * settleLook)
	if strings.Contains(logs.String(), "start-up memory released") {
		t.Fatalf("released while a channel was not up yet; log:\n%s", logs.String())
	}
	ch.up.Store(true)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("releaseStartupMemory did not return 10 s after the channel came up")
	}
	if out := logs.String(); !strings.Contains(out, "start-up memory released") || !strings.Contains(out, "heap_objects_bytes=") {
		t.Fatalf("no release logged; log:\n%s", out)
	}
}
