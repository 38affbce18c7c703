//go:build !noembedded

package redis

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/url"

	"github.com/alicebob/miniredis/v2"

	"github.com/switchboard-chat/switchboard/storage/pidlock"
)

// Embedded is an in-process Redis (miniredis) on 127.0.0.1, used when no
// redis.url is configured. Key TTLs follow the wall clock.
type Embedded struct {
	m        *miniredis.Miniredis
	password string
	lock     *pidlock.Lock
}

// StartEmbeddedFor starts an in-process Redis for the daemon: on a free
// loopback port, with a random password every connection must give (URL
// carries it), and, with opts.DataDir, only if no other process serves
// that data directory's in-process Redis (else an
// *EmbeddedInUseError). It warns that it is for a single replica only.
func StartEmbeddedFor(opts EmbeddedOptions) (*Embedded, error) {
	var lock *pidlock.Lock
	if opts.DataDir != "" {
		var err error
		if lock, err = lockDataDir(opts.DataDir); err != nil {
			return nil, err
		}
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		lock.Release()
		return nil, fmt.Errorf("in-process redis: generate a password: %w", err)
	}
	e, err := start(opts.Logger, hex.EncodeToString(raw))
	if err != nil {
		lock.Release()
		return nil, err
	}
	e.lock = lock
	return e, nil
}

// StartEmbedded starts an in-process Redis on a free loopback port with no
// password and no data directory lock, for tests and tools within one
// process; the daemon uses StartEmbeddedFor. It warns that it is for a
// single replica only. A nil logger discards.
func StartEmbedded(logger *slog.Logger) (*Embedded, error) {
	return start(logger, "")
}

// start runs miniredis on 127.0.0.1, requiring password unless it is empty.
func start(logger *slog.Logger, password string) (*Embedded, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	m := miniredis.NewMiniRedis()
	// Without this TTLs only move on FastForward; with it they expire by
	// the wall clock like real Redis.
	m.ClockTTL(true)
	if password != "" {
		m.RequireAuth(password)
	}
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("start in-process redis on 127.0.0.1: %w; set redis.url to use another Redis", err)
	}
	logger.Warn(embeddedWarning, "addr", m.Addr())
	return &Embedded{m: m, password: password}, nil
}

// URL returns the redis:// URL to pass to Open. It holds the password, if
// any: pass it on, never log it.
func (e *Embedded) URL() string {
	u := url.URL{Scheme: "redis", Host: e.m.Addr()}
	if e.password != "" {
		u.User = url.UserPassword("", e.password)
	}
	return u.String()
}

// Close stops the server, drops all its data and releases the data
// directory.
func (e *Embedded) Close() {
	e.m.Close()
	e.lock.Release()
	e.lock = nil
}

// String names the server without its password, so printing or logging an
// Embedded never shows it.
func (e *Embedded) String() string { return "in-process redis on " + e.m.Addr() }
