package redis

import (
	"fmt"
	"log/slog"

	"github.com/alicebob/miniredis/v2"
)

// embeddedWarning is logged once when the in-process Redis starts.
const embeddedWarning = "using in-process Redis: single replica only, rate limits and dedupe keys are not durable; set redis.url for production"

// Embedded is an in-process Redis (miniredis) on 127.0.0.1, used when no
// redis.url is configured. Key TTLs follow the wall clock.
type Embedded struct {
	m *miniredis.Miniredis
}

// StartEmbedded starts an in-process Redis on a free loopback port and
// warns that it is for a single replica only. A nil logger discards.
func StartEmbedded(logger *slog.Logger) (*Embedded, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	m := miniredis.NewMiniRedis()
	// Without this TTLs only move on FastForward; with it they expire by
	// the wall clock like real Redis.
	m.ClockTTL(true)
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("start in-process redis on 127.0.0.1: %w", err)
	}
	logger.Warn(embeddedWarning, "addr", m.Addr())
	return &Embedded{m: m}, nil
}

// URL returns the redis:// URL to pass to Open.
func (e *Embedded) URL() string { return "redis://" + e.m.Addr() }

// Close stops the server and drops all its data.
func (e *Embedded) Close() { e.m.Close() }
