// Package redis holds switchboard's fast shared state in Redis: rate limits,
// dedupe keys, one-time notices and locks.
package redis

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/bsm/redislock"
	"github.com/go-redis/redis_rate/v10"
	goredis "github.com/redis/go-redis/v9"

	"github.com/switchboard-chat/switchboard/bot"
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
}

// Store is switchboard's Redis state. It implements bot.Limiter,
// bot.Deduper (and so bot.Notice) and bot.Locker.
type Store struct {
	client  *goredis.Client
	addr    string
	prefix  string
	logger  *slog.Logger
	limiter *redis_rate.Limiter
	locks   *redislock.Client
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
// never appears in errors or logs.
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
	client := goredis.NewClient(ro)
	scripts := prefixedScripter{client: client, prefix: opts.Prefix}
	s := &Store{
		client:  client,
		addr:    ro.Addr,
		prefix:  opts.Prefix,
		logger:  opts.Logger,
		limiter: redis_rate.NewLimiter(scripts),
		locks:   redislock.New(scripts),
	}
	if err := s.Ping(ctx); err != nil {
		s.logger.Warn("redis not reachable yet; will keep trying", "err", err)
		return s, nil
	}
	s.logger.Info("redis connected", "addr", ro.Addr, "db", ro.DB, "key_prefix", opts.Prefix)
	return s, nil
}

// Ping checks that Redis answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis at %s is unreachable: %w (check redis.url and that Redis is running)", s.addr, err)
	}
	return nil
}

// Close closes the connection pool.
func (s *Store) Close() error {
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
