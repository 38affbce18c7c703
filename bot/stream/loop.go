package stream

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
)

// loop shows an Answer's latest text, one platform call at a time, at
// most one visible update per Options.Every.
type loop struct {
	a     *Answer
	woken chan struct{} // a new text is there (capacity 1)
	quit  chan struct{} // closed by stop
	done  chan struct{} // closed when the loop ends

	next    time.Time // no update before then (pace)
	blocked time.Time // the platform asked us to wait (429) until then
	broken  bool      // the platform refused the answer: show no more
}

// startLoop starts the update loop of a.
func startLoop(a *Answer) *loop {
	l := &loop{a: a, woken: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	go l.run()
	return l
}

// wake tells the loop a new text is there; it never blocks.
func (l *loop) wake() {
	select {
	case l.woken <- struct{}{}:
	default:
	}
}

// stop ends the loop and waits for it, and for the platform call under
// way, to end.
func (l *loop) stop() {
	close(l.quit)
	<-l.done
}

func (l *loop) run() {
	defer close(l.done)
	a := l.a
	a.mu.Lock()
	a.loadLocked(a.ctx)
	a.mu.Unlock()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-l.quit:
			return
		case <-a.ctx.Done():
			return
		case <-l.woken:
		case <-timer.C:
		}
		if l.broken {
			continue
		}
		if wait := time.Until(later(l.next, l.blocked)); wait > 0 {
			timer.Reset(wait)
			continue
		}
		if l.update() {
			timer.Reset(time.Until(later(l.next, l.blocked)))
		}
	}
}

// update makes one platform call towards showing the latest text: the
// first live message that shows something else is edited, or the next
// one begun. It reports whether more calls are due.
func (l *loop) update() (more bool) {
	a := l.a
	want := chunks(a.wanted(), a.o.Channel.LiveLimit())
	i := 0
	for i < len(want) && i < len(a.shown) && a.shown[i] == want[i] {
		i++
	}
	if i == len(want) || strings.TrimSpace(want[i]) == "" {
		return false
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(a.ctx), callTimeout)
	defer cancel()
	var err error
	if i < len(a.ids) {
		err = a.o.Channel.UpdateLive(ctx, a.o.To, a.ids[i], want[i])
	} else {
		var id string
		id, err = a.o.Channel.BeginLive(ctx, a.o.To, a.replyTo(i), a.o.Asker, want[i])
		if err == nil {
			l.begun(ctx, id)
		}
	}
	now := time.Now()
	l.next = now.Add(a.o.Every)
	var ra *channels.RetryAfterError
	switch {
	case err == nil:
		a.shown[i] = want[i]
	case errors.As(err, &ra):
		l.blocked = now.Add(ra.After) // the updates due meanwhile are skipped
		a.o.Log.Debug("live answer paused by the platform", "for", ra.After)
	default:
		l.broken = true // the final reply still comes, from the outbox
		a.o.Log.Debug("live answer not shown", "err", err)
		return false
	}
	return i+1 < len(want) || err != nil
}

// begun records a new live message.
func (l *loop) begun(ctx context.Context, id string) {
	a := l.a
	a.ids = append(a.ids, id)
	a.shown = append(a.shown, "")
	if a.o.Store == nil {
		return
	}
	if err := a.o.Store.SaveLive(ctx, a.o.Session, a.o.To, a.ids); err != nil {
		a.o.Log.Warn("live answer not recorded; a crash now would leave it half-written", "err", err)
	}
}

// replyTo is what the i-th live message replies to: the first answers the
// run's message.
func (a *Answer) replyTo(i int) string {
	if i > 0 {
		return ""
	}
	return a.o.ReplyTo
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
