// Package batcher sends the calls made while one is in flight together: one
// round trip, for PostgreSQL one transaction and commit, for many callers
// where each alone would pay its own. The storage packages use it for
// their hottest writes (storage/postgres's group commit, storage/redis's
// lock obtains).
package batcher

import (
	"context"
	"errors"
	"slices"
	"sync"
)

// ErrPanicked is the error the other members of a batch get when sending
// it panicked (the panic goes on in the caller that sent it).
var ErrPanicked = errors.New("batcher: sending the batch panicked")

// Group gathers concurrent calls into batches, one batch in flight at a
// time. The call that finds none in flight sends its own at once, so a lone
// call waits for nobody; calls that come meanwhile queue, and when the batch
// in flight ends the first of them sends everything queued, up to Max. The
// zero value is ready to use (Max 0 means no cap).
type Group[T any] struct {
	// Max caps how many calls one batch carries.
	Max int

	mu      sync.Mutex
	busy    bool // a batch is in flight
	waiting []*member[T]
}

// member is one call's part of a batch.
type member[T any] struct {
	item T
	// turn receives true when the member is to send the next batch, or
	// false once its batch has ended (err then says how).
	turn chan bool
	err  error
}

// Do adds item to the next batch and returns, once a batch carrying it has
// been sent, the error send returned for that batch. send is called by one
// of the callers, under that caller's ctx, with the items of its batch in
// the order they came; every caller of one Group passes the same send (or
// one that does the same). A caller waiting in the queue does not leave
// when its ctx ends: its item may be on the wire already, and send must
// not leave the others' results in doubt because its sender gave up.
func (g *Group[T]) Do(ctx context.Context, item T, send func(ctx context.Context, items []T) error) error {
	m := &member[T]{item: item, turn: make(chan bool, 1)}
	g.mu.Lock()
	g.waiting = append(g.waiting, m)
	lead := !g.busy // then m is the only one waiting
	g.busy = true
	g.mu.Unlock()
	if !lead && !<-m.turn {
		return m.err
	}
	g.send(ctx, m, send)
	return m.err
}

// send takes the batch from the head of the queue and sends it; when it
// ends (even by a panic) it tells the batch's members and hands the turn
// to the first call queued meanwhile.
func (g *Group[T]) send(ctx context.Context, sender *member[T], send func(context.Context, []T) error) {
	g.mu.Lock()
	n := len(g.waiting)
	if g.Max > 0 {
		n = min(n, g.Max)
	}
	batch := slices.Clone(g.waiting[:n])
	g.waiting = slices.Delete(g.waiting, 0, n)
	g.mu.Unlock()
	items := make([]T, len(batch))
	for i, m := range batch {
		items[i] = m.item
	}
	err := ErrPanicked
	defer func() { g.ended(batch, sender, err) }()
	err = send(ctx, items)
}

// ended tells the members of a batch that it ended with err and lets the
// first queued call send the next batch.
func (g *Group[T]) ended(batch []*member[T], sender *member[T], err error) {
	g.mu.Lock()
	var next *member[T]
	if len(g.waiting) > 0 {
		next = g.waiting[0]
	} else {
		g.busy = false
	}
	g.mu.Unlock()
	if next != nil {
		next.turn <- true
	}
	for _, m := range batch {
		m.err = err
		if m != sender {
			m.turn <- false
		}
	}
}

// Waiting reports how many calls wait for the batch in flight.
func (g *Group[T]) Waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.waiting)
}

// Idle reports whether no batch is in flight.
func (g *Group[T]) Idle() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return !g.busy
}
