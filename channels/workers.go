package channels

import (
	"sync"
	"time"
)

// Workers runs functions on goroutines that stay for more work after one
// returns, instead of on a new goroutine each time. A goroutine starts with
// a small stack and grows it by copying as calls go deeper; handling one
// message (HTTP client, pgx, JSON, Markdown) takes a fresh goroutine through
// several such copies. A goroutine that waits here keeps its stack (until
// the garbage collector shrinks an unused one), so the next message starts
// with the room the last one needed.
type Workers struct {
	idle time.Duration
	work chan func()
	quit chan struct{}
	stop sync.Once
}

// NewWorkers returns Workers whose goroutines wait up to idle (10 s when
// not positive) for more work and then exit, so an idle daemon keeps none.
func NewWorkers(idle time.Duration) *Workers {
	if idle <= 0 {
		idle = 10 * time.Second
	}
	return &Workers{idle: idle, work: make(chan func()), quit: make(chan struct{})}
}

// Go runs f on a waiting goroutine or, when none waits, on a new one. It
// never blocks.
func (w *Workers) Go(f func()) {
	select {
	case w.work <- f:
	default:
		go w.loop(f)
	}
}

// Stop makes waiting goroutines exit now, and each running one once its
// function returns. Go still works after Stop, on a new goroutine each time.
func (w *Workers) Stop() { w.stop.Do(func() { close(w.quit) }) }

// loop runs f, then whatever Go hands over, until idle passes with none.
func (w *Workers) loop(f func()) {
	var t *time.Timer
	for {
		f()
		f = nil // let it go while waiting
		if t == nil {
			t = time.NewTimer(w.idle)
		} else {
			t.Reset(w.idle)
		}
		select {
		case f = <-w.work:
		case <-t.C:
			return
		case <-w.quit:
			t.Stop()
			return
		}
	}
}
