package telegramtest

import (
	"context"
	"io"
	"strings"
	"sync"
)

// stall is an upload StallUpload stops mid-body.
type stall struct {
	after   int64
	reached chan struct{} // closed once the upload stopped
	release chan struct{} // closed to let it go on
	once    sync.Once
}

// StallUpload makes the next call of method (sendPhoto, sendVoice or
// sendDocument) stop reading its file after the first after bytes, as a
// slow network does mid-upload, until release is called, the client goes
// away or the server closes. reached is closed once the upload stopped. A
// client that dies before its whole file is sent sent no message: nothing
// is recorded (bytes it wrote before dying may still arrive, as on a real
// network). release may be called more than once.
func (s *Server) StallUpload(method string, after int64) (reached <-chan struct{}, release func()) {
	st := &stall{after: after, reached: make(chan struct{}), release: make(chan struct{})}
	s.mu.Lock()
	if s.stalls == nil {
		s.stalls = map[string]*stall{}
	}
	s.stalls[strings.ToLower(method)] = st
	s.mu.Unlock()
	return st.reached, func() { st.once.Do(func() { close(st.release) }) }
}

// takeStall returns (and forgets) the stall set for method's next call.
func (s *Server) takeStall(method string) *stall {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stalls[method]
	delete(s.stalls, method)
	return st
}

// reader reads r as it is until after bytes, then waits for release (or
// ctx's end, or done: then the read fails) before reading on.
func (st *stall) reader(ctx context.Context, done <-chan struct{}, r io.Reader) io.Reader {
	if st == nil {
		return r
	}
	return io.MultiReader(io.LimitReader(r, st.after), readerFunc(func(p []byte) (int, error) {
		st.wait(ctx, done)
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		select {
		case <-done:
			return 0, io.ErrUnexpectedEOF
		default:
		}
		return r.Read(p)
	}))
}

// wait marks the stall reached and waits until it is released, ctx ends
// or done is closed.
func (st *stall) wait(ctx context.Context, done <-chan struct{}) {
	select {
	case <-st.reached:
	default:
		close(st.reached)
	}
	select {
	case <-st.release:
	case <-ctx.Done():
	case <-done:
	}
}

// readerFunc is a function as an io.Reader.
type readerFunc func(p []byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }
