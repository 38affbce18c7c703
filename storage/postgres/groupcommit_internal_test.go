package postgres

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// recordingSender records the keys of each batch it is sent (each queued
// statement's first argument) and holds the first batch until gate closes.
type recordingSender struct {
	gate    chan struct{}
	mu      sync.Mutex
	batches [][]string
}

func (s *recordingSender) SendBatch(_ context.Context, b *pgx.Batch) pgx.BatchResults {
	s.mu.Lock()
	first := len(s.batches) == 0
	var keys []string
	for _, q := range b.QueuedQueries {
		keys = append(keys, fmt.Sprint(q.Arguments...))
	}
	s.batches = append(s.batches, keys)
	s.mu.Unlock()
	if first {
		<-s.gate
	}
	return doneResults{}
}

// doneResults is a batch that succeeded; groupCommit only closes it.
type doneResults struct{ pgx.BatchResults }

func (doneResults) Close() error { return nil }

// A group carries at most groupMax callers, in the order of their keys
// (so that groups take row locks in one order), behind the lock
// timeout's setting; the rest go in the next group, sent by one of them.
func TestGroupsAreSortedAndCapped(t *testing.T) {
	g := newGroupCommit(nil)
	s := &recordingSender{gate: make(chan struct{})}
	ctx := context.Background()
	run := func(key string) error {
		return g.run(ctx, s, key, func(b *pgx.Batch) { b.Queue("stmt", key) })
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := run("held"); err != nil {
			t.Error(err)
		}
	})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		s.mu.Lock()
		sent := len(s.batches)
		s.mu.Unlock()
		if sent == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first group was never sent")
		}
	}
	const n = groupMax + 6
	for i := range n {
		key := fmt.Sprintf("k%03d", n-i) // queued in descending order
		wg.Go(func() {
			if err := run(key); err != nil {
				t.Error(err)
			}
		})
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			if g.group.Waiting() == i+1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("caller %d never queued", i)
			}
		}
	}
	close(s.gate)
	wg.Wait()

	if len(s.batches) != 3 {
		t.Fatalf("%d batches sent; want 3: %q", len(s.batches), s.batches)
	}
	// Each behind the lock timeout's setting.
	if want := []string{"250", "held"}; !slices.Equal(s.batches[0], want) {
		t.Errorf("first batch = %q; want %q", s.batches[0], want)
	}
	// The first groupMax queued were k070 down to k007: sent sorted.
	var second []string
	for i := n - groupMax + 1; i <= n; i++ {
		second = append(second, fmt.Sprintf("k%03d", i))
	}
	if want := append([]string{"250"}, second...); !slices.Equal(s.batches[1], want) {
		t.Errorf("second batch = %q; want %q", s.batches[1], want)
	}
	if want := []string{"250", "k001", "k002", "k003", "k004", "k005", "k006"}; !slices.Equal(s.batches[2], want) {
		t.Errorf("third batch = %q; want %q", s.batches[2], want)
	}
	if !g.group.Idle() || g.group.Waiting() != 0 {
		t.Errorf("after the last group: idle %v, %d waiting", g.group.Idle(), g.group.Waiting())
	}
}
