package channels

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Health tracks whether a channel's connection works, for Ready, and logs
// outages once per failure streak instead of once per retry. Adapters embed
// one and call Failed and Succeeded around their calls to the platform.
type Health struct {
	platform string
	log      *slog.Logger
	redact   func(error) error

	mu       sync.Mutex
	err      error
	failures int
}

// NewHealth returns a Health that is not ready until the first success.
// redact, if set, removes secrets (tokens in URLs) from errors before they
// are stored or logged.
func NewHealth(platform string, log *slog.Logger, redact func(error) error) *Health {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if redact == nil {
		redact = func(err error) error { return err }
	}
	return &Health{platform: platform, log: log, redact: redact,
		err: fmt.Errorf("%s: not connected yet", platform)}
}

// Ready returns nil while connected, else why not.
func (h *Health) Ready(context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

// Set records the state without logging (e.g. "stopped").
func (h *Health) Set(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil {
		err = h.redact(err)
	}
	h.err = err
}

// Failed records a failed operation. The first failure of a streak is
// logged as a warning, later ones at debug level.
func (h *Health) Failed(op string, err error, retryIn time.Duration) {
	err = h.redact(err)
	h.mu.Lock()
	h.err = fmt.Errorf("%s %s: %w", h.platform, op, err)
	h.failures++
	first := h.failures == 1
	h.mu.Unlock()
	if !first {
		h.log.Debug(h.platform+" still unreachable", "op", op, "error", err)
		return
	}
	attrs := []any{"op", op, "error", err}
	if retryIn > 0 {
		attrs = append(attrs, "retry_in", retryIn)
	}
	h.log.Warn(h.platform+" unreachable, retrying until it answers", attrs...)
}

// Succeeded records a success, ending any failure streak. The recovery
// line is logged before Ready reports ready, so whoever sees the channel
// ready also finds the line in the log.
func (h *Health) Succeeded(op string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failures > 0 {
		h.log.Info(h.platform+" reachable again", "op", op, "failed_attempts", h.failures)
	}
	h.err = nil
	h.failures = 0
}
