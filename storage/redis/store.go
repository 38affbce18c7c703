// Package redis holds switchboard's fast shared state in Redis: rate limits,
// dedupe keys, one-time notices and locks.
package redis

import (
	"context"
	"fmt"
	"github.com/redis/go-redis/extra/redisotel/v9"
	"go.opentelemetry.io/otel/trace"
	"log/slog"
	"os"
	"time"

	"github.com/go-redis/redis_rate/v10"
	goredis "github.com/redis/go-redis/v9"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/storage/batcher"
)

// DefaultPrefix is put in front of every key when Options.Prefix is empty.
const DefaultPrefix = "sb:"

// Options tunes Open.
type Options struct {
	// Prefix goes in front of every key the store writes (default "sb:"),
	// so several deployments or tests can share one Redis.
	Prefix string
	// Logger receives connection events; nil discards them.
	Logger *slog.Logger
	// InstanceTTL is how long after this process's last heartbeat its locks
	// count as abandoned (default DefaultInstanceTTL); it beats every
	// InstanceTTL/3 while it holds locks.
	InstanceTTL time.Duration
	// IdleProbe is how often a store that holds no lock asks Redis whether
	// it answers (default DefaultIdleProbe), so an outage that begins while
	// the daemon is idle is known before a message's call waits it out.
	IdleProbe time.Duration
	// Tracing, when set, traces every command (a span per command or
	// pipeline, child of the caller's span).
	Tracing trace.TracerProvider
}

// Store is switchboard's Redis state. It implements bot.Limiter,
// bot.Deduper (and so bot.Notice) and bot.Locker. It is one live instance:
// while it holds locks it keeps a heartbeat key in Redis, and its locks name
// it as their owner, so another process can tell its locks from those of a
// process that died.
type Store struct {
	client  *goredis.Client
	addr    string
	prefix  string
	logger  *slog.Logger
	limiter *redis_rate.Limiter
	scripts prefixedScripter
	health  *health
	inst    *instance
	// obtains gathers the Obtain calls made while one is in flight.
	obtains batcher.Group[*obtainCall]
}

var (
	_ bot.Limiter = (*Store)(nil)
	_ bot.Deduper = (*Store)(nil)
	_ bot.Notice  = (*Store)(nil)
	_ bot.Locker  = (*Store)(nil)
)

// Open prepares the client for the Redis at url (redis://, rediss:// or
// unix://). It connects lazily: a Redis that is down now is not an error
// (Ping reports it, and calls succeed once it is back). The password in url
// never appears in errors or logs. It starts the instance heartbeat; Close
// stops it.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	ro, err := parseURL(url)
	if err != nil {
		return nil, err
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.InstanceTTL <= 0 {
		opts.InstanceTTL = DefaultInstanceTTL
	}
	if opts.IdleProbe <= 0 {
		opts.IdleProbe = DefaultIdleProbe
	}
	id, err := newInstanceID()
	if err != nil {
		return nil, err
	}
	hostname, _ := os.Hostname()
	client := goredis.NewClient(ro)
	if opts.Tracing != nil {
		if err := redisotel.InstrumentTracing(client, redisotel.WithTracerProvider(opts.Tracing), redisotel.WithDBStatement(false)); err != nil {
			_ = client.Close()
			return nil, fmt.Errorf("redis tracing: %w", err)
		}
	}
	scripts := prefixedScripter{client: client, prefix: opts.Prefix}
	s := &Store{
		client:  client,
		addr:    ro.Addr,
		prefix:  opts.Prefix,
		logger:  opts.Logger,
		limiter: redis_rate.NewLimiter(scripts),
		scripts: scripts,
		obtains: batcher.Group[*obtainCall]{Max: obtainMax},
		inst: &instance{id: id, key: opts.Prefix + instanceKey(id), ttl: opts.InstanceTTL, idleProbe: opts.IdleProbe,
			label: fmt.Sprintf("%s-%d", hostname, os.Getpid()), wake: make(chan struct{}, 1)},
	}
	s.health = &health{logger: opts.Logger, addr: ro.Addr, onDown: s.inst.needed}
	pingErr := s.Ping(ctx)
	// Installed after the first ping, which is reported here: a Redis that
	// is down at start-up starts an outage whose end the hook logs.
	if pingErr != nil {
		s.health.down, s.health.since = true, time.Now()
	}
	client.AddHook(s.health)
	s.beat()
	if pingErr != nil {
		s.logger.Warn("redis not reachable yet; will keep trying", "err", pingErr)
		return s, nil
	}
	s.logger.Info("redis connected", "addr", ro.Addr, "db", ro.DB, "key_prefix", opts.Prefix, "instance", id)
	return s, nil
}

// Ping checks that Redis answers; it asks Redis even during an outage.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.client.Ping(asProbe(ctx)).Err(); err != nil {
		return unreachable(s.addr, err)
	}
	return nil
}

// Available reports whether Redis answered the store's latest command
// that reached it (the heartbeat asks every second while locks are held
// or Redis is down, and every IdleProbe otherwise).
func (s *Store) Available() bool { return s.health.Available() }

// Close stops the heartbeat, removes it (locks this instance still holds
// become free for others at once) and closes the connection pool.
func (s *Store) Close() error {
	s.stopBeating()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	_ = s.client.Del(asProbe(ctx), s.inst.key).Err()
	cancel()
	if err := s.client.Close(); err != nil {
		return fmt.Errorf("close redis client: %w", err)
	}
	return nil
}

// Client returns the underlying go-redis client for features this package
// does not wrap. Keys written through it are not prefixed automatically; use
// Prefix.
func (s *Store) Client() *goredis.Client { return s.client }

// Prefix returns the prefix put in front of every key.
func (s *Store) Prefix() string { return s.prefix }
