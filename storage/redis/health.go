package redis

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// ErrUnavailable is returned at once, without asking Redis, by calls made
// while an outage is in progress: every call would otherwise wait out
// go-redis's dial retries (up to seconds). The heartbeat keeps probing and
// ends the outage as soon as Redis answers.
var ErrUnavailable = errors.New("redis unreachable (outage in progress)")

// health follows whether Redis answers, from the outcome of every command
// the store's client runs (the heartbeat probes it every second), and logs
// one warning when Redis stops answering and one line when it is back —
// not a line per failed call. It is installed as a go-redis hook; during
// an outage it fails calls fast with ErrUnavailable, probes excepted.
type health struct {
	logger *slog.Logger
	addr   string
	onDown func() // called when an outage begins (the heartbeat then probes)

	mu       sync.Mutex
	down     bool
	since    time.Time // start of the current outage
	failures int       // calls failed during the current outage
}

var _ goredis.Hook = (*health)(nil)

// Available reports whether Redis answered the last command that reached
// a verdict.
func (h *health) Available() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.down
}

// observe records the outcome of one command.
func (h *health) observe(err error) {
	up, decided := answered(err)
	if !decided {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case !up && !h.down:
		h.down, h.since, h.failures = true, time.Now(), 1
		if h.onDown != nil {
			h.onDown()
		}
		h.logger.Warn("redis unreachable: rate limits are off and session locks are skipped until it is back",
			"addr", h.addr, "err", err)
	case !up:
		h.failures++
	case h.down:
		h.down = false
		h.logger.Info("redis reachable again", "addr", h.addr,
			"outage_ms", time.Since(h.since).Milliseconds(), "failed_calls", h.failures)
	}
}

// answered says whether err shows Redis answering (up) or not; decided is
// false when err says nothing about Redis (the caller gave up, the client
// was closed).
func answered(err error) (up, decided bool) {
	var rerr goredis.Error
	var opErr *net.OpError
	switch {
	case err == nil, errors.Is(err, goredis.Nil), errors.As(err, &rerr):
		return true, true // a reply, possibly an error reply, came back
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return false, true // checked before context errors: a dial timeout wraps one
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, goredis.ErrClosed), errors.Is(err, goredis.ErrPoolTimeout):
		return false, false
	}
	return false, true
}

// DialHook passes dials through; their failures surface in ProcessHook.
func (h *health) DialHook(next goredis.DialHook) goredis.DialHook { return next }

// ProcessHook observes each command's outcome.
func (h *health) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if h.failFast(ctx) {
			err := fmt.Errorf("%w: %s", ErrUnavailable, h.addr)
			cmd.SetErr(err)
			return err
		}
		err := next(ctx, cmd)
		h.observe(err)
		return err
	}
}

// ProcessPipelineHook observes each pipeline's outcome.
func (h *health) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		if h.failFast(ctx) {
			err := fmt.Errorf("%w: %s", ErrUnavailable, h.addr)
			for _, c := range cmds {
				c.SetErr(err)
			}
			return err
		}
		err := next(ctx, cmds)
		h.observe(err)
		return err
	}
}

// probeKey marks a context whose commands always reach Redis, outage or
// not (the heartbeat, Ping).
type probeKey struct{}

// asProbe marks ctx as a probe's.
func asProbe(ctx context.Context) context.Context { return context.WithValue(ctx, probeKey{}, true) }

// failFast reports whether a call under ctx should fail without asking
// Redis: an outage is in progress and the call is no probe.
func (h *health) failFast(ctx context.Context) bool {
	if probe, _ := ctx.Value(probeKey{}).(bool); probe {
		return false
	}
	return !h.Available()
}
