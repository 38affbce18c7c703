package channeltest

import (
	"context"
	"errors"
	"io"
	"sync"
)

// Stall stops a fake platform's read of one upload mid-body, as a slow
// network does, until it is released: the way to kill a client while its
// file is on the wire. A nil *Stall stalls nothing.
type Stall struct {
	after     int64
	reached   chan struct{} // closed once the read stopped
	release   chan struct{} // closed to let it go on
	finished  chan struct{} // closed once the body after the stall ended
	reachOnce sync.Once
	relOnce   sync.Once
	endOnce   sync.Once
	err       error // how the body ended; set before finished is closed
}

// NewStall is a stall after the first after bytes of a body.
func NewStall(after int64) *Stall {
	return &Stall{after: after, reached: make(chan struct{}), release: make(chan struct{}), finished: make(chan struct{})}
}

// Reached is closed once the upload stopped at the stall.
func (st *Stall) Reached() <-chan struct{} { return st.reached }

// Release lets the stopped upload go on; it may be called more than once.
func (st *Stall) Release() { st.relOnce.Do(func() { close(st.release) }) }

// Finished is closed once the body after the stall was read to its end or
// failed; Err then says which.
func (st *Stall) Finished() <-chan struct{} { return st.finished }

// Err is how the stalled body ended once Finished is closed: nil when the
// client sent all of it, else the read's error (a client that died
// mid-body). Before that it is nil.
func (st *Stall) Err() error {
	select {
	case <-st.finished:
		return st.err
	default:
		return nil
	}
}

// Reader reads r as it is until the stall's bytes, then waits for
// Release before reading on. ctx's end (the request's) or done (the
// fake's close) fail the read instead, so a stall never released does
// not hold the fake's Close.
func (st *Stall) Reader(ctx context.Context, done <-chan struct{}, r io.Reader) io.Reader {
	if st == nil {
		return r
	}
	return io.MultiReader(io.LimitReader(r, st.after), readerFunc(func(p []byte) (int, error) {
		if err := st.wait(ctx, done); err != nil {
			st.end(err)
			return 0, err
		}
		n, err := r.Read(p)
		if err != nil {
			st.end(err)
		}
		return n, err
	}))
}

// wait marks the stall reached and waits until it is released; it
// returns an error when ctx ends or done is closed first.
func (st *Stall) wait(ctx context.Context, done <-chan struct{}) error {
	st.reachOnce.Do(func() { close(st.reached) })
	select {
	case <-st.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-done:
		return io.ErrUnexpectedEOF
	}
}

// end records how the body ended: io.EOF is a whole body.
func (st *Stall) end(err error) {
	st.endOnce.Do(func() {
		if !errors.Is(err, io.EOF) {
			st.err = err
		}
		close(st.finished)
	})
}

// readerFunc is a function as an io.Reader.
type readerFunc func(p []byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }
