package telegram

import (
	"context"
	"sync"

	"github.com/go-telegram/bot/models"
)

// inflight tracks the updates fetched by getUpdates but not yet handled,
// and remembers where the next poller must start. An update of an album
// still being collected is parked: it does not hold back the next poll
// (which must fetch the album's other parts) but it holds back the
// confirmation of every update from it on (see offsetFloor).
type inflight struct {
	mu     sync.Mutex
	open   map[int64]bool // fetched, not yet done → parked
	busy   int            // open updates that are not parked
	idle   chan struct{}  // closed when busy drops to zero
	last   int64          // the newest update id fetched
	lost   int64          // the oldest update id not handed over (Start stopped first); 0: none
	resume int64          // lastUpdateID for the next poller (see reset)
}

// reset forgets the tracked updates when Start begins, and decides where
// its poller starts: after the newest update when every update was handled,
// else just before the oldest one that was not (Telegram delivers it and
// those after it again; the handler's durable dedupe drops what it stored
// already).
func (f *inflight) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resume = f.last
	for id := range f.open {
		f.resume = min(f.resume, id-1)
	}
	if f.lost != 0 {
		f.resume = min(f.resume, f.lost-1)
	}
	if f.busy > 0 {
		close(f.idle)
	}
	f.open, f.busy, f.lost = nil, 0, 0
}

// resumeAfter returns the update id the next poller starts after.
func (f *inflight) resumeAfter() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.resume
}

// fetched counts a getUpdates batch.
func (f *inflight) fetched(updates []*models.Update) {
	if len(updates) == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.open == nil {
		f.open = map[int64]bool{}
	}
	for _, u := range updates {
		if _, dup := f.open[u.ID]; dup {
			continue
		}
		f.last = max(f.last, u.ID)
		f.open[u.ID] = false
		if f.busy == 0 {
			f.idle = make(chan struct{})
		}
		f.busy++
	}
}

// park marks update id as waiting for the rest of its album.
func (f *inflight) park(id int64) { f.setParked(id, true) }

// unpark marks update id as handed to its chat's lane with its album.
func (f *inflight) unpark(id int64) { f.setParked(id, false) }

func (f *inflight) setParked(id int64, parked bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	was, ok := f.open[id]
	if !ok || was == parked {
		return
	}
	f.open[id] = parked
	if parked {
		f.busy--
		if f.busy == 0 {
			close(f.idle)
		}
		return
	}
	if f.busy == 0 {
		f.idle = make(chan struct{})
	}
	f.busy++
}

// done counts update id off; handled is false when it was not handed over
// (Start stopped first).
func (f *inflight) done(id int64, handled bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !handled && (f.lost == 0 || id < f.lost) {
		f.lost = id
	}
	parked, ok := f.open[id]
	if !ok {
		return
	}
	delete(f.open, id)
	if parked {
		return
	}
	f.busy--
	if f.busy == 0 {
		close(f.idle)
	}
}

// offsetFloor returns the oldest parked update, 0 when none is: the next
// getUpdates must not confirm it, so its offset may be no higher.
func (f *inflight) offsetFloor() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	var floor int64
	for id, parked := range f.open {
		if parked && (floor == 0 || id < floor) {
			floor = id
		}
	}
	return floor
}

// wait blocks until every tracked update is handled or parked, or ctx
// ends.
func (f *inflight) wait(ctx context.Context) error {
	f.mu.Lock()
	if f.busy == 0 {
		f.mu.Unlock()
		return nil
	}
	idle := f.idle
	f.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
