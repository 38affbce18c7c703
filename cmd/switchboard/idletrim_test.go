package main

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/channels/channeltest"
)

// The trim runs only after a quiet minute, and what it allocates itself
// does not make the next minute look busy.
func TestIdleTrimOnlyWhenQuiet(t *testing.T) {
	var allocated uint64
	trims := 0
	it := &idleTrim{
		allocated: func() uint64 { return allocated },
		trim: func() {
			trims++
			allocated += trimIdleBelow // a trim that allocates a lot
		},
	}
	steps := []struct {
		alloc uint64 // allocated during the minute before the look
		trim  bool
	}{
		{alloc: 200 << 10, trim: true},         // idle: heartbeats only
		{alloc: 0, trim: true},                 // the trim's own allocations do not count
		{alloc: 64 << 20, trim: false},         // messages flowing
		{alloc: trimIdleBelow, trim: false},    // just busy enough
		{alloc: trimIdleBelow - 1, trim: true}, // just quiet enough
	}
	for i, s := range steps {
		allocated += s.alloc
		before := trims
		if got := it.look(); got != s.trim || (trims > before) != s.trim {
			t.Errorf("look %d after %d bytes = %v (trimmed %d times), want %v", i, s.alloc, got, trims-before, s.trim)
		}
	}
}

func TestHeapAllocatedCountsAllocations(t *testing.T) {
	before := heapAllocated()
	sink = make([]byte, 1<<20)
	if got := heapAllocated() - before; got < 1<<20 {
		t.Errorf("heapAllocated grew by %d bytes after a 1 MiB allocation", got)
	}
}

var sink []byte

// The loop the daemon runs trims while the process is quiet, says so at
// debug level with the runtime's figures, and ends with its context.
func TestTrimWhileIdleTrimsAndStops(t *testing.T) {
	var logs channeltest.Log
	d := &daemon{log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.trimWhileIdle(ctx, 20*time.Millisecond)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), "idle memory trimmed") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("trimWhileIdle did not return after its context ended")
	}
	out := logs.String()
	if !strings.Contains(out, "idle memory trimmed") || !strings.Contains(out, "heap_objects_bytes=") {
		t.Fatalf("no trim logged within 10 s; log:\n%s", out)
	}
}
