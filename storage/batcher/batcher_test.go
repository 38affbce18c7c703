package batcher_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/storage/batcher"
)

// sender records the batches it is sent and holds the first until gate
// closes; it fails a batch carrying "bad".
type sender struct {
	gate    chan struct{}
	mu      sync.Mutex
	batches [][]string
}

var errBad = errors.New("a bad item")

func (s *sender) send(_ context.Context, items []string) error {
	s.mu.Lock()
	first := len(s.batches) == 0
	s.batches = append(s.batches, slices.Clone(items))
	s.mu.Unlock()
	if first {
		<-s.gate
	}
	if slices.Contains(items, "bad") {
		return errBad
	}
	return nil
}

func (s *sender) sent() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.batches)
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// A lone call is sent at once; the calls made while it is in flight go
// together, in the order they came, at most Max to a batch, and each gets
// its own batch's error.
func TestCallsMadeMeanwhileGoTogether(t *testing.T) {
	g := batcher.Group[string]{Max: 3}
	s := &sender{gate: make(chan struct{})}
	ctx := context.Background()
	errs := map[string]error{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	do := func(item string) {
		wg.Go(func() {
			err := g.Do(ctx, item, s.send)
			mu.Lock()
			errs[item] = err
			mu.Unlock()
		})
	}
	do("first")
	waitUntil(t, "the first batch", func() bool { return len(s.sent()) == 1 })
	for i, item := range []string{"a", "bad", "c", "d", "e"} {
		do(item)
		waitUntil(t, item+" to queue", func() bool { return g.Waiting() == i+1 })
	}
	close(s.gate)
	wg.Wait()

	want := [][]string{{"first"}, {"a", "bad", "c"}, {"d", "e"}}
	if got := s.sent(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("batches %q; want %q", got, want)
	}
	for item, err := range errs {
		if wantErr := item == "a" || item == "bad" || item == "c"; errors.Is(err, errBad) != wantErr || (!wantErr && err != nil) {
			t.Errorf("%s got %v", item, err)
		}
	}
	if !g.Idle() || g.Waiting() != 0 {
		t.Errorf("after the last batch: idle %v, %d waiting", g.Idle(), g.Waiting())
	}
}

// A batch whose sending panics still ends: the panic goes on in its
// sender, the others in it get ErrPanicked, and the next call is not stuck.
func TestABatchThatPanicsStillEnds(t *testing.T) {
	var g batcher.Group[string]
	s := &sender{gate: make(chan struct{})}
	ctx := context.Background()
	held := make(chan error, 1)
	go func() { held <- g.Do(ctx, "held", s.send) }()
	waitUntil(t, "the first batch", func() bool { return len(s.sent()) == 1 })
	panicked := make(chan any, 1)
	go func() {
		defer func() { panicked <- recover() }()
		_ = g.Do(ctx, "a", func(context.Context, []string) error { panic("a broken send") })
	}()
	waitUntil(t, "a to queue", func() bool { return g.Waiting() == 1 })
	other := make(chan error, 1)
	go func() { other <- g.Do(ctx, "b", s.send) }()
	waitUntil(t, "b to queue", func() bool { return g.Waiting() == 2 })
	close(s.gate)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if p := <-panicked; p == nil {
		t.Error("the panic was swallowed")
	}
	select {
	case err := <-other:
		if !errors.Is(err, batcher.ErrPanicked) {
			t.Errorf("the other member of the batch got %v; want ErrPanicked", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the other member of the batch was never told it ended")
	}
	if err := g.Do(ctx, "c", s.send); err != nil {
		t.Fatal(err)
	}
	if got := s.sent(); len(got) != 2 || !slices.Equal(got[1], []string{"c"}) {
		t.Errorf("batches %q; want [held] then [c]", got)
	}
}
