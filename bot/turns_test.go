package bot_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
)

// TestTurnsRunOnePassAtATime: passes sharing a Turns never overlap, each
// runs once and its error comes back; a nil Turns runs the pass at once;
// a pass whose context ends while it waits does not run.
func TestTurnsRunOnePassAtATime(t *testing.T) {
	turns := bot.NewTurns()
	var running, most, ran atomic.Int32
	errPass := errors.New("pass failed")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			err := turns.Run(context.Background(), func(context.Context) error {
				n := running.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				time.Sleep(5 * time.Millisecond)
				running.Add(-1)
				ran.Add(1)
				if i == 0 {
					return errPass
				}
				return nil
			})
			if (i == 0) != errors.Is(err, errPass) {
				t.Errorf("pass %d: Run returned %v", i, err)
			}
		})
	}
	wg.Wait()
	if most.Load() != 1 || ran.Load() != 8 {
		t.Fatalf("passes at once at most %d (want 1), ran %d (want 8)", most.Load(), ran.Load())
	}

	var none *bot.Turns
	called := false
	if err := none.Run(context.Background(), func(context.Context) error { called = true; return nil }); err != nil || !called {
		t.Fatalf("nil Turns: err %v, called %v", err, called)
	}

	hold := make(chan struct{})
	holding := make(chan struct{})
	go func() {
		_ = turns.Run(context.Background(), func(context.Context) error { close(holding); <-hold; return nil })
	}()
	<-holding
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := turns.Run(ctx, func(context.Context) error { t.Error("a pass ran after its context ended"); return nil })
	close(hold)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting pass: err %v, want its context's", err)
	}
}
